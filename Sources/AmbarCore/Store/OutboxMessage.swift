import Foundation

/// A message a durable consumer recorded for the outside world, in the same store transaction as
/// the work that produced it (``ManagedObjectContext/recordOutboxMessage(topic:payload:key:)``),
/// waiting in the store's outbox until it is sent.
///
/// A delivery loop (`ChangeConsumer.deliverOutbox(_:)` in SharedStoreIPC) sends each and then
/// removes it; a copy that dies between the two sends it again, with the same ``key``. A receiver
/// that keeps the keys it has acted on sees each effect once.
public struct OutboxMessage: Sendable, Hashable, Identifiable {
    /// The message's number in the store's outbox: among the messages waiting, in the order they
    /// were recorded (on SQLite a number may be given again once its message is removed; the
    /// ``key`` tells them apart).
    public let id: Int64
    /// The consumer that recorded it.
    public let consumer: String
    /// The idempotency key to hand the receiver: the caller's, or `CONSUMER/TOKEN/N` — the
    /// consumer, the ledger token its batch moved it to, and the message's place in that batch.
    /// Unique in the store.
    public let key: String
    /// What the message is, for the sender to route it (`"mail"`, `"webhook"`).
    public let topic: String
    /// The message itself.
    public let payload: Data
    /// The ledger token of the last transaction the recording batch handled.
    public let token: Int64
    /// When it was recorded.
    public let recorded: Date
    /// How many times sending it failed.
    public let attempts: Int
    /// Why the last attempt failed, if one did.
    public let lastError: String?
    /// Not to be sent again before this (after a failure).
    public let notBefore: Date

    /// A value with every stored property given.
    package init(
        id: Int64, consumer: String, key: String, topic: String, payload: Data, token: Int64, recorded: Date, attempts: Int, lastError: String?,
        notBefore: Date
    ) {
        self.id = id
        self.consumer = consumer
        self.key = key
        self.topic = topic
        self.payload = payload
        self.token = token
        self.recorded = recorded
        self.attempts = attempts
        self.lastError = lastError
        self.notBefore = notBefore
    }
}

/// A message recorded on a context, written with its consumer's next position move.
package struct OutboxDraft: Sendable, Hashable {
    package let topic: String
    package let payload: Data
    /// The caller's idempotency key, or nil for the derived one.
    package let key: String?

    package init(topic: String, payload: Data, key: String?) {
        self.topic = topic
        self.payload = payload
        self.key = key
    }

    /// The key of the `index`th message of `move` (the caller's, else `CONSUMER/TOKEN/INDEX`).
    package func key(in move: ConsumerMove, index: Int) -> String {
        key ?? "\(move.consumer)/\(move.token)/\(index)"
    }
}
