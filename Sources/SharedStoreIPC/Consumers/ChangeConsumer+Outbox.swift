import AmbarCore
import Foundation

extension ChangeConsumer {
    /// Sends the outbox messages this consumer's handlers recorded
    /// (`ManagedObjectContext.recordOutboxMessage(topic:payload:key:)`), oldest first, and removes
    /// each once `send` returns; runs until ``stop()`` or the task's cancellation.
    ///
    /// Run it beside ``process(reconcile:_:)`` (or ``events()``) on the same consumer: it sends
    /// only while this copy holds the consumer's ownership lease, so of several copies only the
    /// active one sends, and a standby that takes over sends what the other left. It wakes when a
    /// save is seen (this process's or another's) and at least every ``Options/checkInterval``.
    ///
    /// A `send` that throws keeps the message and the ones after it (they are sent in order): the
    /// message is tried again after `retryDelay`, doubled at each failure up to
    /// `maximumRetryDelay`; its attempts and last error are in the store (`sync-agent consumers`).
    /// A copy that dies after `send` and before the removal sends the message again, with the same
    /// `OutboxMessage.key`: hand the key to the receiver (an `Idempotency-Key` header, a message
    /// ID), and a receiver that keeps the keys it has acted on sees each effect once.
    ///
    /// ```swift
    /// async let work: Void = consumer.process { transaction, context in
    ///     for id in transaction.inserted where id.entityName == "Order" {
    ///         try context.recordOutboxMessage(topic: "mail", payload: try mail(for: id, in: context))
    ///     }
    /// }
    /// async let mail: Void = consumer.deliverOutbox { message in
    ///     try await mailer.send(message.payload, idempotencyKey: message.key)
    /// }
    /// _ = try await (work, mail)
    /// ```
    ///
    /// - Throws: The store's errors (not `send`'s: those are retried).
    public func deliverOutbox(
        retryDelay: Duration = .seconds(1), maximumRetryDelay: Duration = .seconds(60), _ send: @escaping @Sendable (OutboxMessage) async throws -> Void
    ) async throws {
        let name = self.name
        let coordinator = self.coordinator
        while !Task.isCancelled, !state.withLock({ $0.stopped }) {
            let rings = signal.rings
            var wait = options.checkInterval
            if state.withLock({ $0.ownership }) != nil {
                let messages = try await onQueue { () throws(AmbarError) in try coordinator.outboxMessages(consumer: name, limit: Self.outboxPage) }
                state.withLock { $0.outboxReads += 1 }
                // Whether every message of the page went out: only then may more wait at once.
                var sentAll = true
                for message in messages {
                    guard !Task.isCancelled, !state.withLock({ $0.stopped }), state.withLock({ $0.ownership }) != nil else {
                        sentAll = false
                        break
                    }
                    let due = message.notBefore.timeIntervalSinceNow
                    if due > 0 {
                        wait = min(wait, .milliseconds(Int64(due * 1000) + 1))
                        sentAll = false
                        break
                    }
                    do {
                        try await send(message)
                    } catch {
                        let delay = Self.retryDelay(after: message.attempts + 1, first: retryDelay, maximum: maximumRetryDelay)
                        Self.logger.warning(
                            "sending an outbox message failed; it is tried again later, and the ones after it wait",
                            metadata: [
                                "consumer": "\(name)", "key": "\(message.key)", "attempt": "\(message.attempts + 1)", "retry-in": "\(delay)",
                                "error": "\(error)",
                            ])
                        let until = Date().addingTimeInterval(Double(delay.components.seconds) + Double(delay.components.attoseconds) * 1e-18)
                        let description = String(describing: error)
                        try await onQueue { () throws(AmbarError) in try coordinator.deferOutboxMessage(message, error: description, until: until) }
                        wait = min(wait, delay)
                        sentAll = false
                        break
                    }
                    // The result: false when another copy sent and removed it meanwhile, which is fine.
                    _ = try await onQueue { () throws(AmbarError) in try coordinator.removeOutboxMessage(message) }
                }
                if sentAll, messages.count == Self.outboxPage { continue }  // a full page sent: more may wait
            }
            await signal.wait(after: rings, timeout: wait)
        }
    }

    /// How many outbox messages one round reads.
    static let outboxPage = 100

    /// How many pages of the outbox this copy has read (each round of delivery reads one).
    var outboxReadCount: Int { state.withLock { $0.outboxReads } }

    /// The wait before attempt `attempt + 1` of a message whose `attempt`th failed: `first`,
    /// doubled at each failure, at most `maximum`.
    static func retryDelay(after attempt: Int, first: Duration, maximum: Duration) -> Duration {
        var delay = first
        for _ in 1..<max(1, min(attempt, 30)) where delay < maximum { delay *= 2 }
        return min(delay, maximum)
    }
}
