import AmbarCore
import AmbarDataStack

/// Ledger transactions delivered to a durable consumer together, in token order.
///
/// ``transactions`` are the ones the consumer's options select (other processes' only, by
/// default; never the empty markers of maintenance). ``through`` is where the consumer's position
/// moves once the batch is handled: the token of the last transaction looked at, which may be
/// past the last one delivered when transactions the consumer does not take followed it.
public struct ChangeBatch: Sendable, Hashable {
    /// The transactions, in token order; never empty.
    public let transactions: [HistoryTransaction]
    /// The position after this batch: transactions up to this token are done once it is handled.
    public let through: Int64

    /// Creates a batch (the consumer builds them; tests may too).
    public init(transactions: [HistoryTransaction], through: Int64) {
        self.transactions = transactions
        self.through = through
    }
}
