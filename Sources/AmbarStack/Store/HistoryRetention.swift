import Foundation

/// How long a store keeps its ledger, its consumers' cursors and its idempotency receipts.
///
/// The ledger is how processes that were away catch up; kept forever it grows by every
/// transaction. ``PersistentStoreCoordinator/purgeHistory(_:now:)`` applies a retention:
///
/// - transactions older than ``history`` are removed, but never one that a consumer seen within
///   ``consumerLease`` has not processed yet;
/// - cursors of consumers not seen for longer than ``consumerLease`` are removed (a consumer that
///   comes back after that finds its history expired and refreshes fully);
/// - idempotency receipts older than ``receipts`` are removed (a save repeated after that with the
///   same key is no longer recognised as done).
///
/// ```swift
/// let retention = HistoryRetention(history: 3_600, consumerLease: 86_400)
/// let purge = try coordinator.purgeHistory(retention)
/// print(purge.purgedThrough, purge.transactionsRemoved)
/// ```
public struct HistoryRetention: Sendable, Equatable {
    /// How long a transaction stays in the ledger, in seconds (default one day).
    public var history: TimeInterval
    /// How long a consumer counts as alive after it last recorded its position, in seconds
    /// (default one day). Consumers record their position at least every quarter of it.
    public var consumerLease: TimeInterval
    /// How long an idempotency receipt is kept, in seconds (default 30 days).
    public var receipts: TimeInterval

    /// One day of history, a one-day consumer lease, 30 days of receipts.
    public static let standard = HistoryRetention()

    /// Creates a retention; every value must be positive.
    public init(history: TimeInterval = 86_400, consumerLease: TimeInterval = 86_400, receipts: TimeInterval = 30 * 86_400) {
        self.history = history
        self.consumerLease = consumerLease
        self.receipts = receipts
    }

    /// Throws ``AmbarError/invalidArgument(_:)`` unless every duration is positive and finite.
    public func validate() throws(AmbarError) {
        for (name, value) in [("history", history), ("consumer lease", consumerLease), ("receipts", receipts)] where !(value > 0 && value.isFinite) {
            throw .invalidArgument("the \(name) retention must be a positive number of seconds, not \(value)")
        }
    }
}

/// What one purge removed.
public struct HistoryPurge: Sendable, Equatable {
    /// The ledger is purged through this token (transactions after it remain).
    public var purgedThrough: Int64
    /// Ledger transactions removed by this purge.
    public var transactionsRemoved: Int
    /// Cursors of consumers gone longer than the lease, removed.
    public var cursorsRemoved: Int
    /// Expired idempotency receipts removed.
    public var receiptsRemoved: Int
}

/// The ledger at a glance.
public struct HistorySummary: Sendable, Equatable {
    /// The oldest transaction still in the ledger, or `nil` when it holds none.
    public var oldestToken: Int64?
    /// The token of the last committed transaction (0 when none ever was).
    public var headToken: Int64
    /// How many transactions the ledger holds.
    public var transactions: Int
    /// The ledger is purged through this token.
    public var purgedThrough: Int64
    /// How many purges removed something since the store was created.
    public var purges: Int
}
