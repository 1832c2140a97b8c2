// Built with the package trait HTTP (a default trait).
#if HTTP
    import NIOConcurrencyHelpers

    /// The bytes waiting in change streams' queues (``StreamQueue``): a client behind (one that
    /// has not taken what was queued before) may have at most `perStream` waiting
    /// (`serve --stream-queue`), and is let go when all queues together would pass `limit`
    /// (`--stream-queue-total`). A client that keeps up is given each transaction whatever its
    /// size.
    ///
    /// The total counts memory, not queues: the shared reader queues the same buffers
    /// (``StreamQueue/Entries``) for every stream of an audience, and a batch waiting in a
    /// thousand queues is counted once, while any of them holds it.
    final class StreamMemory: Sendable {
        /// The default of `--stream-queue`: 1 MiB.
        static let defaultPerStream = 1 << 20
        /// The default of `--stream-queue-total`: 256 MiB.
        static let defaultLimit = 256 << 20

        /// The bound of one stream's queue.
        let perStream: Int
        /// The bound of all of them together.
        let limit: Int

        private struct State {
            var used = 0
            /// How many queues hold each batch counted in `used`.
            var holders: [ObjectIdentifier: Int] = [:]
        }
        private let state = NIOLockedValueBox(State())

        init(perStream: Int = defaultPerStream, limit: Int = defaultLimit) {
            self.perStream = perStream
            self.limit = limit
        }

        /// Counts one more queue holding `batch`, and returns true; its bytes are counted only
        /// if no queue held it yet, and then only when they stay within the bound or `always`
        /// (else nothing is counted and it returns false).
        func hold(_ batch: StreamQueue.Entries, always: Bool) -> Bool {
            let id = ObjectIdentifier(batch)
            let used = state.withLockedValue { state -> Int? in
                if let holders = state.holders[id] {
                    state.holders[id] = holders + 1
                    return state.used
                }
                guard always || state.used + batch.bytes <= limit else { return nil }
                state.holders[id] = 1
                state.used += batch.bytes
                return state.used
            }
            guard let used else { return false }
            ChangeStreamMetrics.queuedBytes.record(used)
            return true
        }

        /// Counts one queue fewer holding each of `batches` (once per ``hold(_:always:)``); a
        /// batch no queue holds any more is no longer counted.
        func release(_ batches: some Sequence<StreamQueue.Entries>) {
            let used = state.withLockedValue { state -> Int in
                for batch in batches {
                    let id = ObjectIdentifier(batch)
                    guard let holders = state.holders[id] else { continue }
                    if holders > 1 {
                        state.holders[id] = holders - 1
                    } else {
                        state.holders[id] = nil
                        state.used -= batch.bytes
                    }
                }
                return state.used
            }
            ChangeStreamMetrics.queuedBytes.record(used)
        }
    }
#endif
