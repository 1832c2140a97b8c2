// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import Foundation
    import NIOCore

    /// The Server-Sent Events of a filtered change stream (``ChangeFilter``), which a client
    /// applies in order to hold exactly what `fetch` returns for the filter:
    ///
    /// - `event: upsert`, `data: {"objects": [...], "token": T}`: objects the transaction `T`
    ///   touched (inserted or updated) that match now, as `fetch --json` prints them (their values
    ///   when the event was read: at least as new as `T`). The client stores each by its `id`.
    /// - `event: remove`, `data: {"ids": [...], "token": T}`: the URIs of objects `T` touched
    ///   that do not match now, or that it deleted. The client drops each it holds.
    /// - `event: reset`, `data: {"token": T}` (a snapshot stream only, first): drop everything
    ///   held; the `upsert`s that follow are every object that matched at token `T` (their values
    ///   when read, at least as new as `T`; see ``Snapshot``).
    ///
    /// A transaction's objects may take several events (each of at most about
    /// ``maximumEventBytes``); only its last event carries `id: T`, so that a client dropped in
    /// the middle resumes before the transaction, not after half of it. A transaction that touches
    /// nothing the filter follows sends `id: T` alone (an event with no data, which `EventSource`
    /// records without firing): the client's position still moves.
    struct FilteredChangeEvents: Sendable {
        /// The size past which a transaction's objects go on in another event.
        static let maximumEventBytes = 256 * 1024

        let filter: ChangeFilter
        let model: ManagedObjectModel

        /// The events of `page`, with the touched objects of `objects` (on its reader's queue).
        /// Stops at a transaction whose objects cannot be read or whose filter cannot be decided
        /// (a runaway `MATCHES`).
        func events(_ page: [HistoryTransaction], objects: TouchedObjects) -> PageEvents {
            var events = PageEvents()
            for transaction in page {
                var upserts: [String] = []
                var removes: [String] = []
                for id in transaction.deleted.sorted(by: { $0.uriString < $1.uriString }) where filter.clause(for: id.entityName, in: model) != nil {
                    removes.append(Self.quoted(id.uriString))
                }
                let touched = transaction.inserted.union(transaction.updated).subtracting(transaction.deleted)
                for id in touched.sorted(by: { $0.uriString < $1.uriString }) {
                    guard let clause = filter.clause(for: id.entityName, in: model) else { continue }
                    let failure: String
                    switch objects.read(id) {
                    case .found(let object, let json):
                        do throws(AmbarError) {
                            if let predicate = clause.predicate, try !predicate.evaluate(with: object) {
                                removes.append(Self.quoted(id.uriString))
                            } else {
                                upserts.append(json)
                            }
                            continue
                        } catch {
                            failure = error.description
                        }
                    case .missing:
                        removes.append(Self.quoted(id.uriString))  // deleted since
                        continue
                    case .unreadable(let error): failure = error.description
                    case .unencodable(let reason): failure = reason
                    }
                    events.failure = ChangeStreamEndpoint.Failure(token: transaction.token, reason: "\(failure) (object \(id.uriString))")
                    return events
                }
                let texts =
                    Self.chunked("upsert", "objects", upserts, token: transaction.token) + Self.chunked("remove", "ids", removes, token: transaction.token)
                let buffers = texts.enumerated().map { index, event in
                    ByteBuffer(string: (index == texts.count - 1 ? "id: \(transaction.token)\n" : "") + event)
                }
                events.transactions.append(.init(token: transaction.token, buffers: buffers))
            }
            return events
        }

        /// The objects of a snapshot stream, as of token `token`: the IDs of every object the
        /// filter matched there, read in one read of the store with the ledger's head
        /// (``snapshot(reader:)``). Their values are read a batch at a time as the stream is
        /// written (``snapshotEvents(_:reader:)``), so that a large snapshot holds only its IDs
        /// and one batch.
        struct Snapshot: Sendable {
            let ids: [ManagedObjectID]
            let token: Int64

            /// The IDs whose values one read takes.
            static let batchSize = 500

            /// What the stream begins with: `event: reset`, with an empty `id:` (a client dropped
            /// before the snapshot's end holds no position, and starts it again).
            var reset: ByteBuffer { ByteBuffer(string: "id:\nevent: reset\ndata: {\"token\":\(token)}\n\n") }
            /// What the stream sends once every batch is written: `id: T` alone, from which it
            /// goes on live.
            var end: ByteBuffer { ByteBuffer(string: "id: \(token)\n\n") }
        }

        /// The IDs of every object the filter matches and the ledger's head `T`, in one read.
        func snapshot(reader: ManagedObjectContext) throws -> Snapshot {
            try reader.performAndWait {
                let requests = filter.clauses.map { FetchRequest<ManagedObject>(entityName: $0.entity, predicate: $0.predicate) }
                let (ids, token) = try reader.fetchObjectIDsAtHistoryHead(requests)
                return Snapshot(ids: Array(ids.joined()), token: token)
            }
        }

        /// The `upsert` events of one batch of a snapshot's IDs, their values read now (on
        /// `reader`'s queue, which should hold nothing: `DataStack.temporaryContext()`).
        ///
        /// An object may have changed since the snapshot's token: it is sent with its values now,
        /// or left out when it was deleted or no longer matches — the live events after the token
        /// then bring each such change again, so that a client that applies everything holds what
        /// `fetch` returns at the head.
        func snapshotEvents(_ ids: ArraySlice<ManagedObjectID>, token: Int64, reader: ManagedObjectContext) throws -> [ByteBuffer] {
            try reader.performAndWait {
                var items: [String] = []
                for object in try reader.existingObjects(Array(ids)) {
                    guard let clause = filter.clause(for: object.objectID.entityName, in: model) else { continue }
                    if let predicate = clause.predicate, try !predicate.evaluate(with: object) { continue }
                    items.append(try ChangeStreamEndpoint.json(try ObjectJSON.fields(object)))
                }
                try reader.reset()  // one batch at a time in memory
                return Self.chunked("upsert", "objects", items, token: token).map { ByteBuffer(string: $0) }
            }
        }

        /// `event: NAME` lines with `data: {"KEY": [items], "token": T}`, each of at most about
        /// ``maximumEventBytes`` (one item more than that is an event of its own); none for no
        /// items. Each item is JSON text already.
        static func chunked(_ name: String, _ key: String, _ items: [String], token: Int64) -> [String] {
            var events: [String] = []
            var chunk: [String] = []
            var size = 0
            func flush() {
                guard !chunk.isEmpty else { return }
                events.append("event: \(name)\ndata: {\"\(key)\":[\(chunk.joined(separator: ","))],\"token\":\(token)}\n\n")
                chunk.removeAll(keepingCapacity: true)
                size = 0
            }
            for item in items {
                if size + item.utf8.count > maximumEventBytes { flush() }
                chunk.append(item)
                size += item.utf8.count + 1
            }
            flush()
            return events
        }

        /// A string as JSON text.
        static func quoted(_ text: String) -> String {
            // try?: a one-element array of a string always encodes. Its brackets are dropped.
            let data = try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
            let array =
                data.map { String(decoding: $0, as: UTF8.self) }
                ?? "[\"\"]"
            return String(array.dropFirst().dropLast())
        }
    }
#endif
