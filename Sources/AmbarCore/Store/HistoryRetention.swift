import Foundation

/// How long a store keeps its ledger, its consumers' cursors and its idempotency receipts.
///
/// The ledger is how processes that were away catch up; kept forever it grows by every
/// transaction. ``PersistentStoreCoordinator/purgeHistory(_:now:)`` applies a retention:
///
/// - transactions committed more than ``history`` ago are removed, but never one that a durable consumer seen
///   within ``consumerLease``, or a sharing process seen within ``processLease``, has not
///   processed yet;
/// - durable consumers' positions stay (a consumer that comes back after its lease either
///   continues, or, if history it had not processed was purged meanwhile, is told so with
///   ``AmbarError/historyExpired(after:purgedThrough:)``); sharing processes' merge positions not
///   recorded for longer than their lease are removed;
/// - idempotency receipts older than ``receipts`` are removed (a save repeated after that with the
///   same key is no longer recognised as done).
///
/// A transaction's age is told by the clock of the process that purges, not by the timestamp its
/// writer recorded: each purge notes the ledger's head and the time (a *ledger mark*, when the
/// head moved since the last one), and a later purge removes what was committed by the newest
/// mark older than ``history``. So a writer whose clock is wrong — a year ahead, or behind —
/// changes nothing about retention (only the timestamps shown with its transactions, and the
/// latencies measured from them). A purging process whose own clock jumps forward purges early
/// (never past a live consumer or process), one whose clock jumps back purges late; the marks
/// of several purging processes (hosts on one PostgreSQL store) are read together. The first
/// purges of a store (or after upgrading one made before marks) remove nothing until the
/// oldest mark is ``history`` old.
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
    /// How long a sharing process's merge position holds history back after the process last
    /// recorded it, in seconds (default two minutes; never longer than ``consumerLease``). A
    /// sharing process records it at least every quarter of this while it lives, so a process
    /// that was killed delays purging by at most this long, and its position is removed then.
    /// A process stopped (`SIGSTOP`) or cut off for longer may find history it had not merged
    /// purged: it then re-reads every object it holds, which is correct but costs a full refresh.
    public var processLease: TimeInterval

    /// One day of history, a one-day consumer lease, 30 days of receipts, a two-minute process lease.
    public static let standard = HistoryRetention()

    /// Creates a retention; every value must be positive.
    public init(
        history: TimeInterval = 86_400, consumerLease: TimeInterval = 86_400, receipts: TimeInterval = 30 * 86_400, processLease: TimeInterval = 120
    ) {
        self.history = history
        self.consumerLease = consumerLease
        self.receipts = receipts
        self.processLease = processLease
    }

    /// The lease a sharing process writes with its merge position: ``processLease``, at most
    /// ``consumerLease``.
    public var effectiveProcessLease: TimeInterval { min(processLease, consumerLease) }

    /// Throws ``AmbarError/invalidArgument(_:)`` unless every duration is positive and finite.
    public func validate() throws(AmbarError) {
        let durations = [("history", history), ("consumer lease", consumerLease), ("receipts", receipts), ("process lease", processLease)]
        for (name, value) in durations where !(value > 0 && value.isFinite) {
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
    /// Merge positions of sharing processes gone longer than their lease, removed.
    public var cursorsRemoved: Int
    /// Expired idempotency receipts removed.
    public var receiptsRemoved: Int

    /// Made from its parts, by the modules that read and write stores.
    package init(purgedThrough: Int64, transactionsRemoved: Int, cursorsRemoved: Int, receiptsRemoved: Int) {
        self.purgedThrough = purgedThrough
        self.transactionsRemoved = transactionsRemoved
        self.cursorsRemoved = cursorsRemoved
        self.receiptsRemoved = receiptsRemoved
    }
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

    /// Made from its parts, by the modules that read and write stores.
    package init(oldestToken: Int64? = nil, headToken: Int64, transactions: Int, purgedThrough: Int64, purges: Int) {
        self.oldestToken = oldestToken
        self.headToken = headToken
        self.transactions = transactions
        self.purgedThrough = purgedThrough
        self.purges = purges
    }
}
