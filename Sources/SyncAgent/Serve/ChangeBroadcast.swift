// Built with the package trait HTTP (a default trait).
#if HTTP
    import AmbarCore
    import AmbarDataStack
    import Logging
    import ServiceLifecycle
    import SharedStoreIPC

    /// One reader of the ledger for every change stream `serve` has open.
    ///
    /// It follows the ledger from its head as transactions commit. For each page it reads the
    /// touched objects once, encodes each once, evaluates each distinct filter once (in memory, on
    /// the read pool), and pushes the same bytes to every stream of that audience
    /// (``StreamAudience``, ``StreamQueue``): however many clients follow, a transaction costs one
    /// read.
    ///
    /// A stream joins at its position (``join(_:audience:at:)``) when the broadcast has sent
    /// nothing past it; a stream further behind (a resume, a snapshot older than the broadcast's
    /// position) first reads the ledger on its own, and joins once it has caught up. A stream
    /// whose queue passes its byte bound is dropped from the broadcast (its queue is emptied) and
    /// does the same from the last position it wrote: a slow client is never cut off, and never
    /// holds more than its bound.
    actor ChangeBroadcast: Service {
        /// A class, not a struct: the broadcast visits every follower for every page, and a
        /// reference costs one retain where a copy of the fields costs one each.
        private final class Follower {
            let queue: StreamQueue
            let audience: StreamAudience
            /// The stream's position when it joined: only transactions after it are its.
            let after: Int64

            init(queue: StreamQueue, audience: StreamAudience, after: Int64) {
                self.queue = queue
                self.audience = audience
                self.after = after
            }
        }

        private let sync: SharedStoreSync
        private let stack: DataStack
        private let reads: StoreReadPool
        private let logger: Logger
        /// The transactions streams could not send lately (a stream that would meet one again is
        /// refused at once).
        nonisolated let failures = StreamFailures()
        private var followers: [ObjectIdentifier: Follower] = [:]
        /// The last transaction broadcast; nil until the broadcast has read the ledger's head.
        private var position: Int64?

        init(sync: SharedStoreSync, stack: DataStack, reads: StoreReadPool, logger: Logger) {
            self.sync = sync
            self.stack = stack
            self.reads = reads
            self.logger = logger
        }

        /// Takes `queue` into the broadcast for `audience`, at the stream's `position`: true when
        /// the broadcast has sent nothing after `position` (every later transaction's events are
        /// then pushed to `queue`), false when the stream is behind it and must read the ledger on
        /// its own first.
        func join(_ queue: StreamQueue, audience: StreamAudience, at position: Int64) -> Bool {
            if let current = self.position, position < current { return false }
            followers[ObjectIdentifier(queue)] = Follower(queue: queue, audience: audience, after: position)
            return true
        }

        /// Lets `queue` go (its stream ended).
        func leave(_ queue: StreamQueue) {
            followers[ObjectIdentifier(queue)] = nil
        }

        /// Follows the ledger until graceful shutdown, then ends every follower's queue.
        ///
        /// - Throws: the store's errors (serve then stops: its streams could not go on).
        func run() async throws {
            let reader = try stack.temporaryContext()
            let coordinator = try stack.writerCoordinator
            do {
                try await cancelWhenGracefulShutdown { try await self.follow(reader: reader, coordinator: coordinator) }
            } catch  where Task.isShuttingDownGracefully || Task.isCancelled {
                // A read cut short by the shutdown: not a failure of the store.
            } catch {
                endAll()
                throw error
            }
            endAll()
        }

        private func follow(reader: ManagedObjectContext, coordinator: PersistentStoreCoordinator) async throws {
            while !Task.isCancelled {
                let history = try await reads.read { try coordinator.historySummary() }
                start(at: history)
                do {
                    for try await event in sync.changes(after: history.headToken) {
                        switch event {
                        case .transactions(let page):
                            try await broadcast(page, reader: reader)
                        case .historyExpired:
                            // The broadcast itself fell behind the purge: every stream goes on on its
                            // own (meeting the expiry itself if it is behind it too), and the
                            // broadcast starts again at the head.
                            logger.warning("the change streams' shared reader fell behind the history's purge; it starts again at the head")
                            detachAll()
                        }
                    }
                } catch AmbarError.positionAheadOfLedger(_, let after, let head) {
                    logger.warning(
                        "the ledger's head went back: the store was put back to an earlier state by other means than sync-agent restore; every change stream ends with event: expired, and the shared reader starts again at the head",
                        metadata: ["position": "\(after)", "head": "\(head)"])
                    let event = try await reads.read { [stack] in
                        ChangeStreamEndpoint.expiredEvent(try ChangeStreamEndpoint.pastTheHead(after: after, stack: stack) ?? ["after": after])
                    }
                    endAll(with: StreamQueue.Entry(buffer: event, position: nil))
                }
            }
        }

        /// Starts at the ledger's head (`history`): followers that joined before it, behind it, go
        /// on on their own; followers past it (they joined while the broadcast held no position,
        /// after the store was put back to an earlier state) end with `event: expired`.
        private func start(at history: HistorySummary) {
            let head = history.headToken
            position = head
            for (id, follower) in followers where follower.after != head {
                followers[id] = nil
                if follower.after < head {
                    follower.queue.detach()
                } else if let data = ChangeStreamEndpoint.pastTheHead(after: follower.after, history: history) {
                    follower.queue.end(with: StreamQueue.Entry(buffer: ChangeStreamEndpoint.expiredEvent(data), position: nil))
                }
            }
        }

        /// Every follower goes on on its own; the broadcast holds no position until it starts again.
        private func detachAll() {
            position = nil
            for follower in followers.values { follower.queue.detach() }
            followers.removeAll()
        }

        private func endAll() {
            for follower in followers.values { follower.queue.end() }
            followers.removeAll()
        }

        /// Ends every follower's queue with `last` (what it had queued before is dropped: its
        /// position means nothing any more); the broadcast holds no position until it starts
        /// again.
        private func endAll(with last: StreamQueue.Entry) {
            position = nil
            for follower in followers.values { follower.queue.end(with: last) }
            followers.removeAll()
        }

        /// Reads `page` once for every audience followed (those that join meanwhile included),
        /// and pushes each follower its events.
        private func broadcast(_ page: [HistoryTransaction], reader: ManagedObjectContext) async throws {
            guard let last = page.last?.token else { return }
            var made: [String: PageEvents] = [:]
            while true {
                var wanted: [String: StreamAudience] = [:]
                for follower in followers.values where made[follower.audience.key] == nil { wanted[follower.audience.key] = follower.audience }
                guard !wanted.isEmpty else { break }
                let audiences = Array(wanted.values)
                made.merge(try await reads.read { StreamAudience.events(page, for: audiences, reader: reader) }) { first, _ in first }
                ChangeStreamMetrics.encodings.increment(by: audiences.count)
            }
            if !made.isEmpty { ChangeStreamMetrics.sharedPages.increment() }
            // The entries of the whole page, once per audience: every follower that joined before
            // the page takes them as they are (the same buffers, counted once).
            let first = page[0].token
            var whole: [String: StreamQueue.Entries] = [:]
            for (id, follower) in followers {
                guard !follower.queue.hasEnded else {
                    followers[id] = nil  // its client went
                    continue
                }
                let key = follower.audience.key
                guard let events = made[key] else { continue }
                let entries: StreamQueue.Entries
                if follower.after < first {
                    if let known = whole[key] {
                        entries = known
                    } else {
                        entries = StreamQueue.Entries(events.entries(after: follower.after))
                        whole[key] = entries
                    }
                } else {
                    entries = StreamQueue.Entries(events.entries(after: follower.after))
                }
                guard follower.queue.push(entries) else {
                    followers[id] = nil
                    ChangeStreamMetrics.detached.increment()
                    logger.notice(
                        "a change-stream client fell behind by more than its queue holds; it reads the ledger on its own until it catches up",
                        metadata: ["queue-bytes": "\(follower.queue.limit)"])
                    continue
                }
                if let failure = events.failure {
                    failures.record(failure, audience: follower.audience.key)
                    follower.queue.end()  // after its event: error, the stream ends
                    followers[id] = nil
                }
            }
            position = last
        }
    }
#endif
