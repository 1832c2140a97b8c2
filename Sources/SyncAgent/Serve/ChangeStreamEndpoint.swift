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
    ///   `error`), then the stream ends: the client's position stays before it. For a minute after
    ///   (``StreamFailures``), a stream of the same audience that would meet it again is answered
    ///   `422` with the same fields, so that an `EventSource` stops rather than reconnects.
    /// - With `?entity=E[&where=FORMAT]` (``ChangeFilter``) it follows a query instead:
    ///   `upsert` and `remove` events (``FilteredChangeEvents``), and with `&snapshot=true` (no
    ///   position to resume from) every matching object first.
    /// - A comment line every 15 s keeps proxies from closing an idle stream.
    /// - At most `--max-streams` streams are open at once (``StreamSlots``); one more is a 503
    ///   with `Retry-After`.
    /// - Streams at the head are sent what one shared reader reads (``ChangeBroadcast``); a
    ///   stream behind it, and one whose client reads more slowly than transactions commit (past
    ///   its queue's bytes, `--stream-queue`), reads the ledger on its own until it catches up. A
    ///   slow client is never disconnected for being slow.
    struct ChangeStreamEndpoint: Sendable {
        let sync: SharedStoreSync
        let stack: DataStack
        let reads: StoreReadPool
        let slots: StreamSlots
        let broadcast: ChangeBroadcast
        /// The bounds of the streams' queues (`--stream-queue`, `--stream-queue-total`).
        let memory: StreamMemory
        static let maximumObjectsPerEvent = 10_000
        static let lastEventID = HTTPField.Name("Last-Event-ID")!

        /// A transaction that could not be sent: its token and why (the stream ends before it).
        struct Failure: Error {
            let token: Int64
            let reason: String

            /// Not sent as if it were the transaction: said, without an id (the client's position
            /// stays before it), as `event: error` with `token` and `error`.
            var event: ByteBuffer {
                ChangeStreamEndpoint.errorEvent(token: token, error: "transaction \(token) could not be sent: \(reason)")
            }
        }

        /// `event: error` (no id: the client's position stays where it was) with `token` and
        /// `error`.
        static func errorEvent(token: Int64, error: String) -> ByteBuffer {
            let data: [String: Any] = ["token": token, "error": error]
            // try?: a string and a number always encode.
            return ByteBuffer(string: "event: error\ndata: \((try? json(data)) ?? #"{"error":"encoding"}"#)\n\n")
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
            var snapshot: Stream.Snapshot?
            if let text = resumeAt {
                guard let token = Int64(text), token >= 0 else {
                    return ServeResponses.error(.badRequest, "Last-Event-ID and ?after= take a ledger token (a whole number, 0 or more), not \(text)")
                }
                start = token
                opening = [ByteBuffer(string: "id: \(start)\n\n")]
            } else if let filter, wantsSnapshot {
                let stack = self.stack
                do {
                    let events = FilteredChangeEvents(filter: filter, model: model)
                    let read = try await reads.read { try events.snapshot(reader: try stack.temporaryContext()) }
                    (opening, start, snapshot) = ([read.reset], read.token, Stream.Snapshot(events: events, objects: read))
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
            let audience = filter.map { StreamAudience.filtered(FilteredChangeEvents(filter: $0, model: model)) } ?? .everything
            // A transaction this audience's streams could not send a moment ago would end this one
            // the same way: refused now, so that an EventSource stops instead of reconnecting.
            if let failure = broadcast.failures.failure(audience: audience.key, after: start) {
                let data: [String: Any] = [
                    "token": failure.token,
                    "error":
                        "transaction \(failure.token) could not be sent on this stream \(Int(Date().timeIntervalSince(failure.at))) s ago: \(failure.reason); it is tried again \(Int(StreamFailures.retention)) s after it failed",
                ]
                return ServeResponses.json(Data(try Self.json(data).utf8), status: .unprocessableContent)
            }
            guard let slot = slots.take() else {
                var busy = ServeResponses.error(
                    .serviceUnavailable, "\(slots.maximum) change streams are open, as many as --max-streams allows: try again in a few seconds")
                busy.headers[HTTPField.Name("Retry-After")!] = "5"
                return busy
            }
            opening[0] = ByteBuffer(string: "retry: 2000\n" + String(buffer: opening[0]))
            let (from, openingEvents, snapshotObjects) = (start, opening, snapshot)
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream; charset=utf-8"
            headers[.cacheControl] = "no-cache"
            headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
            let stream = Stream(
                sync: sync, stack: stack, reads: reads, broadcast: broadcast, audience: audience,
                queue: StreamQueue(memory: memory), channel: context.channel, logger: context.logger)
            let body = ResponseBody { writer in
                defer { slot.release() }
                try await stream.run(from: from, opening: openingEvents, snapshot: snapshotObjects, writer: &writer)
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: headers, body: body)
        }

        /// The 410 for a start at `start` whose history is purged, by the store's own check, as the
        /// stream would meet it (a read of no transactions), or that is past the ledger's head (the
        /// store was put back to an earlier state by other means than `sync-agent restore`: the
        /// tokens after the head will name other transactions); `nil` when it is readable.
        private static func gone(after start: Int64, stack: DataStack) throws -> Response? {
            switch Result(catching: { () throws(AmbarError) in try stack.writerCoordinator.history(after: start, limit: 0) }) {
            case .success:
                guard let data = try pastTheHead(after: start, stack: stack) else { return nil }
                return ServeResponses.json(Data(try json(data).utf8), status: .gone)
            case .failure(.historyExpired(let after, let purgedThrough)):
                var data = try expiry(after: after, purgedThrough: purgedThrough, head: nil, stack: stack)
                data["error"] =
                    "the history after token \(after) was purged (through \(purgedThrough)): reconcile with /v1/objects, then follow from head_token"
                return ServeResponses.json(Data(try json(data).utf8), status: .gone)
            case .failure(let error):
                throw error
            }
        }

        /// What a client whose position `after` is past the ledger's head is told (the 410's JSON
        /// and, for a stream already open, `event: expired`'s data): the expiry's fields and an
        /// `error` saying why; nil when `after` is not past the head.
        static func pastTheHead(after: Int64, stack: DataStack) throws -> [String: Any]? {
            pastTheHead(after: after, history: try stack.writerCoordinator.historySummary())
        }

        /// ``pastTheHead(after:stack:)`` against `history`, read before.
        static func pastTheHead(after: Int64, history: HistorySummary) -> [String: Any]? {
            guard after > history.headToken else { return nil }
            return [
                "after": after, "purged_through": history.purgedThrough, "oldest_token": history.oldestToken ?? NSNull(),
                "head_token": history.headToken,
                "error":
                    "position \(after) is past the ledger's head \(history.headToken): the store was put back to an earlier state, and the tokens after the head will name other transactions; reconcile with /v1/objects, then follow from head_token",
            ]
        }

        /// The `event: expired` that ends a stream, with `data`.
        static func expiredEvent(_ data: [String: Any]) -> ByteBuffer {
            // try?: numbers, strings and null always encode.
            ByteBuffer(string: "event: expired\ndata: \((try? json(data)) ?? "{}")\n\n")
        }

        /// What a client is told of history purged after its position `after` (the 410's JSON and
        /// `event: expired`'s data): `after`, `purged_through`, `oldest_token` and `head_token`
        /// (`head`, else the ledger's head now).
        static func expiry(after: Int64, purgedThrough: Int64, head: Int64?, stack: DataStack) throws -> [String: Any] {
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
