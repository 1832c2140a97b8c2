import Logging

extension LogHandler {
    /// The metadata of one entry: the handler's, then its provider's, then the event's (a later
    /// source wins a key), sorted by key.
    func entryMetadata(_ event: LogEvent) -> [(key: String, value: Logger.MetadataValue)] {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        return merged.sorted { $0.key < $1.key }
    }
}
