import AmbarCore
import AmbarDataStack

/// A durable consumer's events, at least once: see ``ChangeConsumer/events()``.
///
/// The position moves past an event when the next one is asked for: a `for try await` loop
/// whose body returned has handled it. Breaking out of the loop leaves the last event
/// unacknowledged: the next iteration (in this process or after a restart) delivers it again.
public struct ConsumerEvents: AsyncSequence, Sendable {
    /// What the sequence yields.
    public typealias Element = ConsumerEvent
    let consumer: ChangeConsumer

    /// An iterator that runs the consumer until it ends.
    public func makeAsyncIterator() -> Iterator { Iterator(run: Run(consumer: consumer)) }

    /// Iterates a consumer's events; one iterator runs the consumer at a time in a process.
    public struct Iterator: AsyncIteratorProtocol {
        let run: Run

        /// The next event, after recording the position past the previous one; `nil` once the
        /// consumer was stopped or the task cancelled.
        public mutating func next() async throws -> ConsumerEvent? {
            try await run.next()
        }
    }

    /// One iteration's state: whether it started, and the event handed out but not acknowledged.
    /// Ends the run when the iterator is dropped.
    final class Run: @unchecked Sendable {
        let consumer: ChangeConsumer
        private var started = false
        private var finished = false
        private var unacknowledged: Int64?

        init(consumer: ChangeConsumer) { self.consumer = consumer }

        // An iterator is used from one task at a time (AsyncIteratorProtocol's contract), so its
        // fields need no lock.
        func next() async throws(AmbarError) -> ConsumerEvent? {
            guard !finished else { return nil }
            if !started {
                try consumer.beginRunning()
                started = true
            }
            let event: ConsumerEvent?
            do {
                if let token = unacknowledged {
                    try await consumer.acknowledge(through: token)
                    unacknowledged = nil
                }
                event = try await consumer.nextDelivery()
            } catch {
                // The sequence ends with the error: a copy standing by takes over at once.
                await consumer.releaseOwnership()
                finish()
                throw error
            }
            guard let event else {
                finish()
                return nil
            }
            switch event {
            case .transactions(let batch): unacknowledged = batch.through
            case .historyExpired(let expiry): unacknowledged = expiry.head
            }
            return event
        }

        private func finish() {
            guard started, !finished else { return }
            finished = true
            consumer.endRunning()
        }

        deinit { if started && !finished { consumer.endRunning() } }
    }
}
