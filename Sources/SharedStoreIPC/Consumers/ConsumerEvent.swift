import AmbarCore
import AmbarDataStack

/// What a durable consumer's event stream (``ChangeConsumer/events()``) yields.
public enum ConsumerEvent: Sendable, Hashable {
    /// Transactions to handle. The position moves past them when the loop asks for the next
    /// event (at least once: after a crash in between, they come again).
    case transactions(ChangeBatch)
    /// History the consumer had not processed was purged. Reconcile from the data (see
    /// ``HistoryExpiry``); the position moves to ``HistoryExpiry/head`` when the loop asks for the
    /// next event.
    case historyExpired(HistoryExpiry)
}
