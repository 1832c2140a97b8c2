// Built with the package trait HTTP (a default trait).
#if HTTP
    import NIOConcurrencyHelpers
    import NIOCore

    /// What waits to be written to one change-stream client, bounded in bytes: per stream, and
    /// across all streams (``StreamMemory``).
    ///
    /// The shared reader (``ChangeBroadcast``) pushes; the stream's response takes what is queued
    /// and writes it. A push that would pass either bound empties the queue instead and marks it
    /// detached: the client is not cut off, its stream reads the ledger on its own from the last
    /// position it wrote, and joins the shared reader again once it has caught up.
    final class StreamQueue: Sendable {
        /// One event's bytes, and the position a client holds once they are written (`id:`), if
        /// they carry one.
        struct Entry: Sendable {
            let buffer: ByteBuffer
            let position: Int64?
        }

        /// Entries to queue, with their size in bytes: one batch, which the shared reader queues
        /// for every stream of an audience, and ``StreamMemory`` counts once however many queues
        /// hold it.
        final class Entries: Sendable {
            let entries: [Entry]
            let bytes: Int

            init(_ entries: [Entry]) {
                self.entries = entries
                self.bytes = entries.reduce(0) { $0 + $1.buffer.readableBytes }
            }
        }

        /// What the stream does next.
        enum Next: Sendable {
            /// Write these, in order.
            case entries([Entry])
            /// The queue was emptied for being too far behind: read the ledger on your own.
            case detached
            /// Nothing more will come (graceful shutdown, the client went, or an error was queued
            /// last).
            case ended
        }

        private struct State {
            var entries = CircularBuffer<Entry>()
            /// The batches `entries` came in, held in `memory` until taken.
            var batches: [Entries] = []
            var bytes = 0
            var detached = false
            var ended = false
            var waiter: CheckedContinuation<Void, Never>?
        }

        /// The bytes one stream may have waiting.
        let limit: Int
        private let memory: StreamMemory
        private let state = NIOLockedValueBox(State())

        /// An empty queue of at most `memory.perStream` bytes, counted in `memory`.
        init(memory: StreamMemory) {
            self.limit = memory.perStream
            self.memory = memory
        }

        /// Queues `batch` and returns true; or, when the client has not taken what was queued
        /// before and `batch` would pass the queue's bound or `memory`'s, empties the queue,
        /// marks it detached and returns false. An empty queue takes `batch` whatever its
        /// size (a large transaction for a client that keeps up). Nothing is queued once the
        /// queue has ended.
        @discardableResult
        func push(_ batch: Entries) -> Bool {
            let (accepted, waiter) = state.withLockedValue { state -> (Bool, CheckedContinuation<Void, Never>?) in
                if state.ended { return (true, nil) }  // the stream is going: nothing to write
                if state.detached { return (false, nil) }
                // A client that has taken everything before is keeping up: it takes this however
                // large (the buffers are the same for every stream of its audience). One behind
                // is let go past the bounds.
                let keepingUp = state.bytes == 0
                guard (keepingUp || state.bytes + batch.bytes <= limit) && memory.hold(batch, always: keepingUp) else {
                    Self.empty(&state, memory: memory)
                    state.detached = true
                    return (false, state.waiter.take())
                }
                state.entries.append(contentsOf: batch.entries)
                state.batches.append(batch)
                state.bytes += batch.bytes
                return (true, state.waiter.take())
            }
            waiter?.resume()
            return accepted
        }

        /// Queues a comment line that keeps proxies from closing an idle stream, when nothing
        /// else waits (a queue with events needs none).
        func keepAlive() {
            let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                guard state.entries.isEmpty, !state.ended, !state.detached else { return nil }
                state.entries.append(Entry(buffer: ByteBuffer(string: ": keep-alive\n\n"), position: nil))
                return state.waiter.take()
            }
            waiter?.resume()
        }

        /// Empties the queue and marks it detached (the shared reader let it go): its stream
        /// reads the ledger on its own from the last position it wrote.
        func detach() {
            state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                guard !state.ended else { return nil }
                Self.empty(&state, memory: memory)
                state.detached = true
                return state.waiter.take()
            }?.resume()
        }

        /// Nothing more is queued; ``next()`` gives what waits, then ``Next/ended``.
        func end() {
            state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                state.ended = true
                return state.waiter.take()
            }?.resume()
        }

        /// Drops what waits and ends the queue with `last`, whatever the bounds: ``next()`` gives
        /// `last`, then ``Next/ended``.
        func end(with last: Entry) {
            state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                guard !state.ended else { return nil }
                Self.empty(&state, memory: memory)
                state.detached = false
                state.entries.append(last)
                state.ended = true
                return state.waiter.take()
            }?.resume()
        }

        /// Whether the queue has ended.
        var hasEnded: Bool { state.withLockedValue { $0.ended } }

        /// What is queued (all of it), waiting for some; ``Next/detached`` once (the queue is
        /// then ready to be joined again); ``Next/ended`` after the last entries of an ended
        /// queue, and when the task is cancelled.
        func next() async -> Next {
            while true {
                let taken = state.withLockedValue { state -> Next? in
                    if state.detached {
                        state.detached = false
                        return .detached
                    }
                    if !state.entries.isEmpty {
                        let entries = Array(state.entries)
                        Self.empty(&state, memory: memory)
                        return .entries(entries)
                    }
                    return state.ended ? .ended : nil
                }
                if let taken { return taken }
                if Task.isCancelled { return .ended }
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let ready = state.withLockedValue { state -> Bool in
                            guard state.entries.isEmpty, !state.detached, !state.ended else { return true }
                            state.waiter = continuation
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    end()
                }
            }
        }

        /// Empties `state`, no longer holding its batches in `memory`.
        private static func empty(_ state: inout State, memory: StreamMemory) {
            memory.release(state.batches)
            state.entries.removeAll(keepingCapacity: true)
            state.batches.removeAll(keepingCapacity: true)
            state.bytes = 0
        }

        deinit {
            memory.release(state.withLockedValue { $0.batches })
        }
    }
#endif
