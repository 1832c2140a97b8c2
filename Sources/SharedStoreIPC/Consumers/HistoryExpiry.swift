import AmbarCore
import AmbarDataStack

/// A durable consumer's history was purged before it processed it: the transactions after
/// ``position`` through ``purgedThrough`` are gone from the ledger, so they cannot be delivered.
///
/// This happens when a consumer was away (stopped, failing) for longer than its lease
/// (`HistoryRetention/consumerLease`, a day by default) and the ledger was purged meanwhile.
/// It is never silent: ``ChangeConsumer/process(reconcile:_:)`` calls its `reconcile` closure with
/// it (or throws `AmbarError/historyExpired(after:purgedThrough:)` when there is none), and
/// ``ChangeConsumer/events()`` yields it as ``ConsumerEvent/historyExpired(_:)``.
///
/// To reconcile, derive from the data itself what the lost transactions would have caused, in a
/// way that is idempotent (it may also see the effects of transactions after ``head``, which are
/// delivered afterwards): for example "one `Notice` for every finished task that has none".
/// The consumer then continues after ``head``.
public struct HistoryExpiry: Sendable, Hashable {
    /// The consumer, or the empty string for a ``ChangeFeed``.
    public let consumer: String
    /// Where the consumer's position was.
    public let position: Int64
    /// The ledger is purged through this token: the oldest transaction it still holds is after it.
    public let purgedThrough: Int64
    /// The ledger's head when the expiry was found: reconciling moves the position here, and
    /// delivery continues after it.
    public let head: Int64

    /// Creates an expiry (the consumer builds them; tests may too).
    public init(consumer: String, position: Int64, purgedThrough: Int64, head: Int64) {
        self.consumer = consumer
        self.position = position
        self.purgedThrough = purgedThrough
        self.head = head
    }
}
