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
        /// position), and when a write fails.
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

            /// Writes the stream to `writer`: `opening`, then the transactions after `start`.
            func run(from start: Int64, opening: [ByteBuffer], writer: inout any ResponseBodyWriter) async throws {
                // A connection closed under the stream (the client hung up: ConnectionGuard closes
                // it) ends the stream now, not at the next write.
                let queue = self.queue
                channel.closeFuture.whenComplete { _ in queue.end() }
                defer { queue.end() }
                var position = start
                do {
                    try await writer.write(contentsOf: opening)
                    try await follow(from: &position, writer: &writer)
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
                    // Following the shared reader, until it lets the stream go or it ends.
                    following: while true {
                        switch await queue.next() {
                        case .entries(let entries):
                            try await writer.write(contentsOf: entries.map(\.buffer))
                            if let last = entries.last(where: { $0.position != nil })?.position { position = last }
                        case .detached:
                            break following
                        case .ended:
                            return
                        }
                    }
                }
            }

            /// Reads the ledger after `position` on its own and writes its events, until the
            /// shared reader takes the stream: true then, false when the stream ends (an error,
            /// an expiry, graceful shutdown, the client gone).
            private func catchUp(from position: inout Int64, writer: inout any ResponseBodyWriter) async throws -> Bool {
                if await broadcast.join(queue, audience: audience, at: position) { return true }
                let reader = try stack.temporaryContext()
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
                        // try?: numbers and null always encode.
                        try await writer.write(ByteBuffer(string: "event: expired\ndata: \((try? ChangeStreamEndpoint.json(data)) ?? "{}")\n\n"))
                        return false
                    }
                }
                return false  // cancelled
            }
        }
    }
#endif
