// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import Foundation

    /// Who a change stream's events are for: every transaction (the unfiltered stream), or one
    /// filter's `upsert` and `remove` events. Streams with the same audience are sent the same
    /// bytes, made once (``ChangeBroadcast``).
    enum StreamAudience: Sendable {
        case everything
        case filtered(FilteredChangeEvents)

        /// Equal for streams sent the same events: the query's `entity` and `where` parameters
        /// as given, in order.
        var key: String {
            switch self {
            case .everything: return ""
            case .filtered(let events): return events.filter.key
            }
        }

        /// The events of `page` for each of `audiences`, by ``key``, reading the touched objects
        /// once in `reader` (reset first: current values).
        static func events(_ page: [HistoryTransaction], for audiences: [StreamAudience], reader: ManagedObjectContext) -> [String: PageEvents] {
            reader.performAndWait {
                // Current values, not those of the last page. A reset that fails is said, not
                // skipped: the streams would send stale objects.
                do throws(AmbarError) {
                    try reader.reset()
                } catch {
                    let failed = PageEvents(
                        failure: ChangeStreamEndpoint.Failure(token: page.first?.token ?? 0, reason: "the reader could not be reset: \(error.description)"))
                    return Dictionary(audiences.map { ($0.key, failed) }) { first, _ in first }
                }
                let objects = TouchedObjects(reader: reader)
                let now = Date()
                var events: [String: PageEvents] = [:]
                for audience in audiences where events[audience.key] == nil {
                    switch audience {
                    case .everything: events[audience.key] = UnfilteredChangeEvents.events(page, objects: objects, now: now)
                    case .filtered(let filtered): events[audience.key] = filtered.events(page, objects: objects)
                    }
                }
                return events
            }
        }
    }
#endif
