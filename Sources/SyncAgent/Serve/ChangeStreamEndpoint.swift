// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import AmbarDataStack
    import Foundation
    import HTTPTypes
    import Hummingbird
    import Logging
    import NIOCore
    import ServiceLifecycle
    import SharedStoreIPC

    /// `GET /v1/changes`: the ledger as Server-Sent Events, one event per transaction, resumable.
    ///
    /// - `id:` is the token, `data:` the object `watch --json` prints for it, plus `objects`: each
    ///   inserted and updated object that still exists, as `fetch --json` prints it (its values when
    ///   the event is sent; at most ``maximumObjectsPerEvent``, then `objects_truncated: true`). An
    ///   object whose values cannot be read is `{"id": URI, "error": reason}` instead.
    /// - It starts after `Last-Event-ID` (what a reconnecting client sends), else after `?after=TOKEN`,
    ///   else at the ledger's head: across reconnects, exactly the ledger's transactions, in order.
    ///   Its first event is that position alone (`id:` with no data).
    /// - A start whose history is purged is a `410 Gone` whose JSON names `after`,
    ///   `purged_through`, `oldest_token` and `head_token`; history purged while the stream runs
    ///   is one `event: expired` with the same fields, then the stream ends.
    /// - A transaction whose event cannot be encoded is one `event: error` without an id (`token`,
    ///   `error`), then the stream ends: the client's position stays before it.
    /// - With `?entity=E[&where=FORMAT]` (``ChangeFilter``) it follows a query instead:
    ///   `upsert` and `remove` events (``FilteredChangeEvents``), and with `&snapshot=true` (no
    ///   position to resume from) every matching object first.
    /// - A comment line every 15 s keeps proxies from closing an idle stream.
    /// - At most `--max-streams` streams are open at once (``StreamSlots``); one more is a 503
    ///   with `Retry-After`.
    /// - At most `backlog` events wait for a client that stopped reading; past that it is
    ///   disconnected (and resumes with `Last-Event-ID`).
    struct ChangeStreamEndpoint: Sendable {
        let sync: SharedStoreSync
        let stack: DataStack
        let reads: StoreReadPool
        let slots: StreamSlots
        let backlog: Int
        static let maximumObjectsPerEvent = 10_000
        static let lastEventID = HTTPField.Name("Last-Event-ID")!

        /// A transaction that could not be sent: its token and why (the stream ends before it).
        struct Failure: Error {
            let token: Int64
            let reason: String
        }

        func response(_ request: Request, context: ServeContext) async throws -> Response {
            let query = QueryParameters(request.uri.query)
            let model = try stack.model
            let filter: ChangeFilter?
            do {
                filter = try ChangeFilter.parse(query, model: model)
            } catch {
                return ServeResponses.error(.badRequest, error.message, position: error.position)
            }
            let wantsSnapshot: Bool
            switch query["snapshot"] {
            case nil, "false": wantsSnapshot = false
            case "true": wantsSnapshot = true
            case let text?: return ServeResponses.error(.badRequest, "snapshot takes true or false, not \(text)")
            }
            if wantsSnapshot, filter == nil {
                return ServeResponses.error(
                    .badRequest, "snapshot=true needs entity=: an unfiltered stream sends transactions, not objects to hold (read those with /v1/objects)")
            }
            // EventSource sends Last-Event-ID only when it holds a position; an empty one is none.
            let resumeAt = [request.headers[Self.lastEventID], query["after"]].compactMap { $0?.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty }
            var start: Int64
            var opening: [ByteBuffer]
            if let text = resumeAt {
                guard let token = Int64(text), token >= 0 else {
                    return ServeResponses.error(.badRequest, "Last-Event-ID and ?after= take a ledger token (a whole number, 0 or more), not \(text)")
                }
                start = token
                opening = [ByteBuffer(string: "id: \(start)\n\n")]
            } else if let filter, wantsSnapshot {
                let stack = self.stack
                do {
                    (opening, start) = try await reads.read {
                        try FilteredChangeEvents(filter: filter, model: model).snapshot(reader: try stack.temporaryContext())
                    }
                } catch let error as AmbarError where FetchCommand.isAboutTheRequest(error) {
                    return ServeResponses.error(.badRequest, "\(error)")
                }
            } else {
                let coordinator = try stack.writerCoordinator
                start = try await reads.read { try coordinator.currentHistoryToken() }
                opening = [ByteBuffer(string: "id: \(start)\n\n")]
            }
            // A position whose history is purged is answered at once, not with a stream that
            // ends after one event: `EventSource` takes a 200 that ends as a reason to reconnect
            // with the same position, for ever; any other status makes it stop.
            let (stack, checked) = (self.stack, start)
            if let gone = try await reads.read({ try Self.gone(after: checked, stack: stack) }) { return gone }
            guard let slot = slots.take() else {
                var busy = ServeResponses.error(
                    .serviceUnavailable, "\(slots.maximum) change streams are open, as many as --max-streams allows: try again in a few seconds")
                busy.headers[HTTPField.Name("Retry-After")!] = "5"
                return busy
            }
            opening[0] = ByteBuffer(string: "retry: 2000\n" + String(buffer: opening[0]))
            let (from, openingEvents) = (start, opening)
            let filtered = filter.map { FilteredChangeEvents(filter: $0, model: model) }
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream; charset=utf-8"
            headers[.cacheControl] = "no-cache"
            headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
            let (sync, reads, backlog, channel, logger) = (self.sync, self.reads, self.backlog, context.channel, context.logger)
            let body = ResponseBody { writer in
                defer { slot.release() }
                let (events, continuation) = AsyncStream<ByteBuffer>.makeStream(bufferingPolicy: .bufferingOldest(backlog))
                // A connection closed under the stream (the client hung up: ConnectionGuard closes
                // it) ends the stream now, not at the next write.
                channel.closeFuture.whenComplete { _ in continuation.finish() }
                // The producer and the keep-alive are child tasks of the response: they end with
                // it, whether the stream ends or the client goes (a write throws).
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        await Self.produce(
                            after: from, opening: openingEvents, filtered: filtered, sync: sync, reads: reads, stack: stack, into: continuation,
                            backlog: backlog,
                            channel: channel,
                            logger: logger)
                    }
                    group.addTask {
                        while true {
                            do {
                                try await Task.sleep(for: .seconds(15))
                            } catch {
                                return  // cancelled: the response ended
                            }
                            continuation.yield(ByteBuffer(string: ": keep-alive\n\n"))
                        }
                    }
                    for await buffer in events { try await writer.write(buffer) }
                    group.cancelAll()
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: headers, body: body)
        }

        /// Reads the ledger after `start` and queues each transaction's event until graceful shutdown,
        /// an expiry, an error, or a client too far behind (then its connection is closed).
        private static func produce(
            after start: Int64, opening: [ByteBuffer], filtered: FilteredChangeEvents?, sync: SharedStoreSync, reads: StoreReadPool, stack: DataStack,
            into continuation: AsyncStream<ByteBuffer>.Continuation, backlog: Int,
            channel: any Channel, logger: Logger
        ) async {
            defer { continuation.finish() }
            // The position first (with a snapshot, after it), as an event with no data (an
            // `EventSource` records its id and fires nothing): a client dropped before the first
            // transaction resumes from here, not from a newer head.
            for buffer in opening { continuation.yield(buffer) }
            let reader: ManagedObjectContext
            do {
                reader = try stack.temporaryContext()
            } catch {
                logger.error("cannot read objects for the change stream", metadata: ["error": "\(error)"])
                return
            }
            await withGracefulShutdownHandler {
                do {
                    for try await event in sync.changes(after: start) {
                        switch event {
                        case .transactions(let page):
                            // On the read pool: the objects' reads, the filter, the JSON.
                            let (buffers, failure) = try await reads.read { filtered?.events(page, reader: reader) ?? events(page, reader: reader) }
                            for buffer in buffers {
                                if case .dropped = continuation.yield(buffer) {
                                    logger.notice(
                                        "a change-stream client stopped reading; disconnected (it resumes with Last-Event-ID)",
                                        metadata: ["client": "\(channel.remoteAddress.map { "\($0)" } ?? "unix socket")", "backlog-events": "\(backlog)"])
                                    channel.close(promise: nil)
                                    return
                                }
                            }
                            if let failure {
                                // Not sent as if it were the transaction: said, without an id, and
                                // the stream ends; the client's position stays before it.
                                logger.error(
                                    "a transaction of the change stream could not be sent; the stream ends before it",
                                    metadata: ["token": "\(failure.token)", "error": "\(failure.reason)"])
                                let data: [String: Any] = [
                                    "token": failure.token, "error": "transaction \(failure.token) could not be sent: \(failure.reason)",
                                ]
                                // try?: strings and a number always encode.
                                continuation.yield(ByteBuffer(string: "event: error\ndata: \((try? json(data)) ?? #"{"error":"encoding"}"#)\n\n"))
                                return
                            }
                        case .historyExpired(let expiry):
                            // Unreadable now: the stream ends (below), and the client reconnects.
                            let data = try Self.expiry(after: expiry.position, purgedThrough: expiry.purgedThrough, head: expiry.head, stack: stack)
                            // try?: numbers and null always encode.
                            continuation.yield(ByteBuffer(string: "event: expired\ndata: \((try? json(data)) ?? "{}")\n\n"))
                            return
                        }
                    }
                } catch {
                    logger.error("the change stream failed; the client reconnects with Last-Event-ID", metadata: ["error": "\(error)"])
                    channel.close(promise: nil)
                }
            } onGracefulShutdown: {
                continuation.finish()
            }
        }

        /// The events of `page`, with the objects read in `reader` (reset first: current values).
        /// Stops at a transaction that cannot be encoded: the events before it, and its token and
        /// why.
        private static func events(_ page: [HistoryTransaction], reader: ManagedObjectContext) -> ([ByteBuffer], Failure?) {
            reader.performAndWait {
                do throws(AmbarError) { try reader.reset() } catch {}  // a temporary context holds nothing to lose
                let now = Date()
                var buffers: [ByteBuffer] = []
                for transaction in page {
                    var data = TransactionLine.json(transaction, now: now)
                    let ids = (transaction.inserted.union(transaction.updated)).sorted { $0.uriString < $1.uriString }
                    var objects: [[String: Any]] = []
                    for id in ids.prefix(maximumObjectsPerEvent) {
                        do throws(AmbarError) {
                            objects.append(try ObjectJSON.fields(try reader.existingObject(with: id)))
                        } catch .objectNotFound {
                            continue  // deleted since
                        } catch {
                            // Said in the event, not printed half: the client sees which object and why.
                            objects.append(["id": id.uriString, "error": error.description])
                        }
                    }
                    data["objects"] = objects
                    if ids.count > maximumObjectsPerEvent { data["objects_truncated"] = true }
                    do {
                        buffers.append(ByteBuffer(string: "id: \(transaction.token)\ndata: \(try json(data))\n\n"))
                    } catch {
                        return (buffers, Failure(token: transaction.token, reason: "\(error)"))
                    }
                }
                return (buffers, nil)
            }
        }

        /// The 410 for a start at `start` whose history is purged (`nil` when it is readable), by
        /// the store's own check, as the stream would meet it: a read of no transactions.
        private static func gone(after start: Int64, stack: DataStack) throws -> Response? {
            switch Result(catching: { () throws(AmbarError) in try stack.writerCoordinator.history(after: start, limit: 0) }) {
            case .success:
                return nil
            case .failure(.historyExpired(let after, let purgedThrough)):
                var data = try expiry(after: after, purgedThrough: purgedThrough, head: nil, stack: stack)
                data["error"] =
                    "the history after token \(after) was purged (through \(purgedThrough)): reconcile with /v1/objects, then follow from head_token"
                return ServeResponses.json(Data(try json(data).utf8), status: .gone)
            case .failure(let error):
                throw error
            }
        }

        /// What a client is told of history purged after its position `after` (the 410's JSON and
        /// `event: expired`'s data): `after`, `purged_through`, `oldest_token` and `head_token`
        /// (`head`, else the ledger's head now).
        private static func expiry(after: Int64, purgedThrough: Int64, head: Int64?, stack: DataStack) throws -> [String: Any] {
            let history = try stack.writerCoordinator.historySummary()
            return [
                "after": after, "purged_through": purgedThrough, "oldest_token": history.oldestToken ?? NSNull(),
                "head_token": head ?? history.headToken,
            ]
        }

        static func json(_ object: [String: Any]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
        }
    }
#endif
