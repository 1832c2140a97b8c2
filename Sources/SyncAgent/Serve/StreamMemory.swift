// Built with the package trait HTTP (a default trait).
#if HTTP
    import NIOConcurrencyHelpers

    /// The bytes waiting in change streams' queues (``StreamQueue``): a client behind (one that
    /// has not taken what was queued before) may have at most `perStream` waiting
    /// (`serve --stream-queue`), and is let go when all queues together would pass `limit`
    /// (`--stream-queue-total`). A client that keeps up is given each transaction whatever its
    /// size: the bytes are shared by every stream of its audience.
    final class StreamMemory: Sendable {
        /// The default of `--stream-queue`: 1 MiB.
        static let defaultPerStream = 1 << 20
        /// The default of `--stream-queue-total`: 256 MiB.
        static let defaultLimit = 256 << 20

        /// The bound of one stream's queue.
        let perStream: Int
        /// The bound of all of them together.
        let limit: Int
        private let used = NIOLockedValueBox(0)

        init(perStream: Int = defaultPerStream, limit: Int = defaultLimit) {
            self.perStream = perStream
            self.limit = limit
        }

        /// Whether `bytes` more stay within the bound.
        func fits(_ bytes: Int) -> Bool {
            used.withLockedValue { $0 + bytes <= limit }
        }

        /// Counts `bytes` more.
        func add(_ bytes: Int) {
            ChangeStreamMetrics.queuedBytes.record(
                used.withLockedValue { used in
                    used += bytes
                    return used
                })
        }

        /// Counts `bytes` fewer.
        func release(_ bytes: Int) {
            guard bytes > 0 else { return }
            ChangeStreamMetrics.queuedBytes.record(
                used.withLockedValue { used in
                    used -= bytes
                    return used
                })
        }
    }
#endif
