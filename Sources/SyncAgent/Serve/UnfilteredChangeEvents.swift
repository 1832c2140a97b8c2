// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import Foundation
    import NIOCore

    /// The Server-Sent Events of the unfiltered change stream: one per transaction, `id:` its
    /// token and `data:` the object `watch --json` prints for it plus `objects`, each inserted and
    /// updated object that still exists as `fetch --json` prints it (its values when the event was
    /// read; at most ``ChangeStreamEndpoint/maximumObjectsPerEvent``, then
    /// `objects_truncated: true`). An object whose values cannot be read is
    /// `{"id": URI, "error": reason}` instead.
    enum UnfilteredChangeEvents {
        /// The events of `page`, with the objects of `objects` (on its reader's queue). Stops at
        /// a transaction that cannot be encoded.
        static func events(_ page: [HistoryTransaction], objects: TouchedObjects, now: Date) -> PageEvents {
            var events = PageEvents()
            for transaction in page {
                let ids = (transaction.inserted.union(transaction.updated)).sorted { $0.uriString < $1.uriString }
                var items: [String] = []
                for id in ids.prefix(ChangeStreamEndpoint.maximumObjectsPerEvent) {
                    switch objects.read(id) {
                    case .found(_, let json):
                        items.append(json)
                    case .missing:
                        continue  // deleted since
                    case .unreadable(let error):
                        // Said in the event, not printed half: the client sees which object and why.
                        items.append(#"{"error":\#(FilteredChangeEvents.quoted(error.description)),"id":\#(FilteredChangeEvents.quoted(id.uriString))}"#)
                    case .unencodable(let reason):
                        events.failure = ChangeStreamEndpoint.Failure(token: transaction.token, reason: "\(reason) (object \(id.uriString))")
                        return events
                    }
                }
                let fields: String
                do {
                    fields = try ChangeStreamEndpoint.json(TransactionLine.json(transaction, now: now))
                } catch {
                    events.failure = ChangeStreamEndpoint.Failure(token: transaction.token, reason: "\(error)")
                    return events
                }
                // The transaction's fields, then its objects, each encoded once for every stream.
                let truncated = ids.count > ChangeStreamEndpoint.maximumObjectsPerEvent ? #","objects_truncated":true"# : ""
                let data = fields.dropLast() + #","objects":["# + items.joined(separator: ",") + "]" + truncated + "}"
                events.transactions.append(.init(token: transaction.token, buffers: [ByteBuffer(string: "id: \(transaction.token)\ndata: \(data)\n\n")]))
            }
            return events
        }
    }
#endif
