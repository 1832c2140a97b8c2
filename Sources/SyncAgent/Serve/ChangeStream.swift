// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import AmbarDataStack
    import Foundation
    import Hummingbird
    import Logging
    import NIOCore
    import ServiceLifecycle
    import SharedStoreIPC

    extension ChangeStreamEndpoint {
        /// One client's change stream, once its response has begun: its opening events, then the
        /// ledger's transactions after its position, from the shared reader (``ChangeBroadcast``)
        /// while it keeps up and from the ledger on its own while it is behind.
        ///
        /// It ends at graceful shutdown, when the client goes, after an `event: error` (a
        /// transaction that could not be sent) or an `event: expired` (history purged past its
        /// position, or its position past the ledger's head: the store was put back to an
        /// earlier state), and when a write fails.
        struct Stream: Sendable {
            let sync: SharedStoreSync
            let stack: DataStack
            let reads: StoreReadPool
            let broadcast: ChangeBroadcast
            let audience: StreamAudience
            let queue: StreamQueue
            let channel: any Channel
            let logger: Logger

            /// A comment this often keeps proxies from closing an idle stream.
            static let keepAliveInterval = Duration.seconds(15)

            /// A snapshot stream's objects: the filter's events and the IDs read with the token
            /// the stream starts from.
            struct Snapshot: Sendable {
                let events: FilteredChangeEvents
                let objects: FilteredChangeEvents.Snapshot
            }

            /// Writes the stream to `writer`: `opening`, the `snapshot`'s objects (if any), then
            /// the transactions after `start`.
            func run(from start: Int64, opening: [ByteBuffer], snapshot: Snapshot?, writer: inout any ResponseBodyWriter) async throws {
                // A connection closed under the stream (the client hung up: ConnectionGuard closes
                // it) ends the stream now, not at the next write.
                let queue = self.queue
                channel.closeFuture.whenComplete { _ in queue.end() }
                defer { queue.end() }
                var position = start
                do {
                    try await writer.write(contentsOf: opening)
                    var snapshotSent = true
                    if let snapshot { snapshotSent = try await send(snapshot, writer: &writer) }
                    if snapshotSent { try await follow(from: &position, writer: &writer) }
                } catch {
                    await broadcast.leave(queue)
                    if !(error is ChannelError || error is IOError || error is CancellationError) {
                        // Not the client going: the store could not be read. The connection is
                        // closed; the client reconnects with Last-Event-ID.
                        logger.error("the change stream failed; the client reconnects with Last-Event-ID", metadata: ["error": "\(error)"])
                    }
                    throw error
                }
                await broadcast.leave(queue)
            }

            /// Writes a snapshot's objects a batch at a time (each batch's values read then, on the
            /// read pool), then its `id: T`: true then, false when the stream ended first (the
            /// client went) or a batch could not be read (after an `event: error`).
            private func send(_ snapshot: Snapshot, writer: inout any ResponseBodyWriter) async throws -> Bool {
                let (events, objects) = (snapshot.events, snapshot.objects)
                let reader = try stack.temporaryContext()
                var offset = 0
                while offset < objects.ids.count {
                    guard !queue.hasEnded else { return false }
                    let batch = objects.ids[offset..<min(offset + FilteredChangeEvents.Snapshot.batchSize, objects.ids.count)]
                    offset += batch.count
                    let buffers: [ByteBuffer]
                    do {
                        buffers = try await reads.read { try events.snapshotEvents(batch, token: objects.token, reader: reader) }
                    } catch {
                        logger.error("the snapshot of a change stream could not be read; the stream ends", metadata: ["error": "\(error)"])
                        try await writer.write(
                            ChangeStreamEndpoint.errorEvent(token: objects.token, error: "the snapshot at token \(objects.token) could not be sent: \(error)"))
                        return false
                    }
                    try await writer.write(contentsOf: buffers)
                }
                try await writer.write(objects.end)
                return true
            }

            /// Follows the ledger with a keep-alive beside it, until the stream ends or graceful
            /// shutdown.
            private func follow(from position: inout Int64, writer: inout any ResponseBodyWriter) async throws {
                let queue = self.queue
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        while true {
                            do {
                                try await Task.sleep(for: Self.keepAliveInterval)
                            } catch {
                                return  // cancelled: the stream ended
                            }
                            queue.keepAlive()
                        }
                    }
                    try await withGracefulShutdownHandler {
                        try await alternate(from: &position, writer: &writer)
                    } onGracefulShutdown: {
                        queue.end()
                    }
                    group.cancelAll()
                }
            }

            /// Alternates between reading the ledger on its own (while behind the shared reader)
            /// and writing what the shared reader queues, until the stream ends.
            private func alternate(from position: inout Int64, writer: inout any ResponseBodyWriter) async throws {
                while !queue.hasEnded {
                    guard try await catchUp(from: &position, writer: &writer) else { return }
                    // Following the shared reader, on the connection's event loop, until it lets
                    // the stream go or it ends.
                    let detached = try await withTaskExecutorPreference(EventLoopTaskExecutor(channel.eventLoop)) {
                        try await followBroadcast(from: &position, writer: &writer)
                    }
                    guard detached else { return }
                }
            }

            /// Writes what the shared reader queues, until it lets the stream go (true: the stream
            /// then catches up on its own) or the queue ends (false). Whatever waits is written
            /// at once, as one chunk: a stream that fell a few events behind catches up in one
            /// write.
            private func followBroadcast(from position: inout Int64, writer: inout any ResponseBodyWriter) async throws -> Bool {
                while true {
                    switch await queue.next() {
                    case .entries(let entries):
                        try await writer.write(Self.joined(entries, allocator: channel.allocator))
                        if let last = entries.last(where: { $0.position != nil })?.position { position = last }
                    case .detached:
                        return true
                    case .ended:
                        return false
                    }
                }
            }

            /// `entries`' bytes in one buffer.
            static func joined(_ entries: [StreamQueue.Entry], allocator: ByteBufferAllocator) -> ByteBuffer {
                if entries.count == 1 { return entries[0].buffer }
                var joined = allocator.buffer(capacity: entries.reduce(0) { $0 + $1.buffer.readableBytes })
                for entry in entries {
                    var buffer = entry.buffer
                    joined.writeBuffer(&buffer)
                }
                return joined
            }

            /// Reads the ledger after `position` on its own and writes its events, until the
            /// shared reader takes the stream: true then, false when the stream ends (an error,
            /// an expiry, graceful shutdown, the client gone).
            private func catchUp(from position: inout Int64, writer: inout any ResponseBodyWriter) async throws -> Bool {
                if await broadcast.join(queue, audience: audience, at: position) { return true }
                let reader = try stack.temporaryContext()
                do {
                    return try await readOnItsOwn(from: &position, reader: reader, writer: &writer)
                } catch AmbarError.positionAheadOfLedger(_, let after, _) {
                    // The store was put back to an earlier state: the stream ends at once, as on
                    // an expiry, and the client's reconnection is a 410.
                    let event = try await reads.read { [stack] in
                        ChangeStreamEndpoint.expiredEvent(try ChangeStreamEndpoint.pastTheHead(after: after, stack: stack) ?? ["after": after])
                    }
                    try await writer.write(event)
                    return false
                }
            }

            /// ``catchUp(from:writer:)``'s own reading of the ledger, until the shared reader
            /// takes the stream.
            private func readOnItsOwn(from position: inout Int64, reader: ManagedObjectContext, writer: inout any ResponseBodyWriter) async throws -> Bool {
                let audience = self.audience
                for try await event in sync.changes(after: position) {
                    guard !queue.hasEnded else { return false }
                    switch event {
                    case .transactions(let page):
                        // On the read pool: the objects' reads, the filter, the JSON.
                        let events = try await reads.read { StreamAudience.events(page, for: [audience], reader: reader)[audience.key] ?? PageEvents() }
                        ChangeStreamMetrics.ownPages.increment()
                        let entries = events.entries(after: position)
                        try await writer.write(contentsOf: entries.map(\.buffer))
                        if let last = entries.last(where: { $0.position != nil })?.position { position = last }
                        if let failure = events.failure {
                            broadcast.failures.record(failure, audience: audience.key)
                            logger.error(
                                "a transaction of the change stream could not be sent; the stream ends before it",
                                metadata: ["token": "\(failure.token)", "error": "\(failure.reason)"])
                            return false
                        }
                        if await broadcast.join(queue, audience: audience, at: position) { return true }
                    case .historyExpired(let expiry):
                        // Unreadable now: the stream ends, and the client reconnects (to a 410).
                        let data = try ChangeStreamEndpoint.expiry(after: expiry.position, purgedThrough: expiry.purgedThrough, head: expiry.head, stack: stack)
                        try await writer.write(ChangeStreamEndpoint.expiredEvent(data))
                        return false
                    }
                }
                return false  // cancelled
            }
        }
    }
#endif
