import Foundation

extension ManagedObjectContext {
    /// Records a message for the outside world — a mail to send, a webhook to call — to be
    /// written in the store's outbox in the same transaction as this context's next save that
    /// moves a consumer's position (``save(movingConsumer:from:to:)``; a `ChangeConsumer`'s
    /// handler's context saves so when the handler returns).
    ///
    /// The message is then in the store exactly when the work that produced it is: a batch that
    /// fails or whose copy dies records nothing, and the batch run again records it once. A
    /// delivery loop (`ChangeConsumer.deliverOutbox(_:)`) sends it and removes it; a send whose
    /// removal is lost is sent again with the same ``OutboxMessage/key``, so a receiver that keeps
    /// the keys it acted on sees each effect once.
    ///
    /// ```swift
    /// try await consumer.process { transaction, context in
    ///     for id in transaction.inserted where id.entityName == "Order" {
    ///         guard let order = try context.existingObject(with: id) as? Order else { continue }
    ///         let mail = Mail(to: order.email, subject: "Order received")
    ///         try context.recordOutboxMessage(topic: "mail", payload: try JSONEncoder().encode(mail))
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - topic: What the message is, for the sender to route it.
    ///   - payload: The message.
    ///   - key: Its idempotency key; by default `CONSUMER/TOKEN/N` (the consumer, the token its
    ///     batch moves it to, the message's place in the batch), which the same work run again
    ///     derives again.
    /// - Throws: ``AmbarError/wrongQueue(context:operation:)`` off the context's queue,
    ///   ``AmbarError/invalidArgument(_:)`` for an empty topic or key. A plain ``save()`` of a
    ///   context holding messages is refused (``AmbarError/saveRefused(context:reason:)``); a key
    ///   already waiting in the outbox fails the save with ``AmbarError/outboxKeyTaken(key:)``.
    public func recordOutboxMessage(topic: String, payload: Data, key: String? = nil) throws(AmbarError) {
        try checkQueue("recordOutboxMessage")
        guard !topic.isEmpty else { throw .invalidArgument("an outbox message needs a topic (what it is, for the sender to route it)") }
        if let key, key.isEmpty { throw .invalidArgument("an outbox message's key cannot be empty: give one of your own, or none") }
        state.outbox.append(OutboxDraft(topic: topic, payload: payload, key: key))
    }

}
