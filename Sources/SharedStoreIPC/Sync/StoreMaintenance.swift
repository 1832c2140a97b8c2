import AmbarCore
import AmbarDataStack
import Foundation
import Logging

/// The upkeep of a shared store, done by the one process that serves its hub (an elected process
/// or the `sync-agent hub` daemon), so that a store used for months stays the same size:
///
/// - the ledger is purged by a `HistoryRetention` on a schedule (a quarter of the history
///   retention, between 0.5 s and one minute);
/// - the write-ahead log is checkpointed every few seconds, and truncated once the store has been
///   idle for 10 seconds.
///
/// Call ``runDue()`` often (every poll tick); it does what is due and returns at once otherwise.
/// Intervals are measured on a monotonic clock.
///
/// ```swift
/// let maintenance = StoreMaintenance(coordinator: coordinator, retention: HistoryRetention(history: 3_600))
/// maintenance.runDue()
/// ```
public final class StoreMaintenance: Sendable {
    private struct State {
        var lastPurge: ContinuousClock.Instant?
        var lastCheckpoint: ContinuousClock.Instant
        var lastActivity: ContinuousClock.Instant
        var lastHead: Int64 = -1
        var truncatedSinceActivity = false
        var lastPurgeResult: HistoryPurge?
        var purgeFailure: String?
        var retention: HistoryRetention
    }

    private let coordinator: PersistentStoreCoordinator
    private let clock = ContinuousClock()
    private let state: Locked<State>
    static let logger = Logger(label: "ambar.sync.maintenance")

    /// Upkeep of `coordinator`'s store with `retention`.
    public init(coordinator: PersistentStoreCoordinator, retention: HistoryRetention) {
        self.coordinator = coordinator
        let now = ContinuousClock().now
        self.state = Locked(State(lastCheckpoint: now, lastActivity: now, retention: retention))
    }

    /// The retention applied.
    public var retention: HistoryRetention { state.withLock { $0.retention } }

    /// Applies `retention` from the next purge on (a reloaded configuration).
    ///
    /// - Throws: `AmbarError.invalidArgument` for a retention that is not positive; the
    ///   previous one stays in force then.
    public func setRetention(_ retention: HistoryRetention) throws(AmbarError) {
        try retention.validate()
        state.withLock { $0.retention = retention }
    }

    /// How often the ledger is purged: a quarter of the history retention, within 0.5 s…60 s.
    public var purgeInterval: Duration { Self.purgeInterval(for: retention) }

    private static func purgeInterval(for retention: HistoryRetention) -> Duration {
        .seconds(min(60, max(0.5, retention.history / 4)))
    }

    /// What the last purge removed, if one ran.
    public var lastPurge: HistoryPurge? { state.withLock { $0.lastPurgeResult } }

    /// Does whatever upkeep is due now.
    public func runDue() {
        let now = clock.now
        noteActivity(now)
        purgeIfDue(now)
        checkpointIfDue(now)
    }

    /// The ledger's head moving is activity (whoever wrote).
    private func noteActivity(_ now: ContinuousClock.Instant) {
        // try?: a head that cannot be read now is read at the next round
        guard let head = try? coordinator.currentHistoryToken() else { return }
        state.withLock { s in
            if head != s.lastHead {
                s.lastHead = head
                s.lastActivity = now
                s.truncatedSinceActivity = false
            }
        }
    }

    private func purgeIfDue(_ now: ContinuousClock.Instant) {
        let due = state.withLock { s -> HistoryRetention? in
            guard s.lastPurge.map({ now - $0 >= Self.purgeInterval(for: s.retention) }) ?? true else { return nil }
            s.lastPurge = now
            return s.retention
        }
        guard let retention = due else { return }
        do {
            let purge = try coordinator.purgeHistory(retention)
            SharingMetrics.purges.increment()
            SharingMetrics.purgedTransactions.increment(by: purge.transactionsRemoved)
            let recovered = state.withLock { s -> Bool in
                defer {
                    s.lastPurgeResult = purge
                    s.purgeFailure = nil
                }
                return s.purgeFailure != nil
            }
            if recovered { Self.logger.notice("purging the ledger works again") }
            if purge.transactionsRemoved + purge.cursorsRemoved + purge.receiptsRemoved > 0 {
                Self.logger.debug(
                    "purged the ledger",
                    metadata: [
                        "through": "\(purge.purgedThrough)", "transactions": "\(purge.transactionsRemoved)",
                        "cursors": "\(purge.cursorsRemoved)", "receipts": "\(purge.receiptsRemoved)",
                    ])
            }
        } catch {
            let message = "\(error)"
            let new = state.withLock { s -> Bool in
                defer { s.purgeFailure = message }
                return s.purgeFailure != message
            }
            if new { Self.logger.error("purging the ledger failed; retrying at the next interval", metadata: ["error": "\(message)"]) }
        }
    }

    private func checkpointIfDue(_ now: ContinuousClock.Instant) {
        let (idle, truncated, sinceCheckpoint) = state.withLock { s in (now - s.lastActivity, s.truncatedSinceActivity, now - s.lastCheckpoint) }
        if idle > .seconds(10) && !truncated {
            do {
                try coordinator.checkpoint(.truncate)
                SharingMetrics.checkpoint(mode: "truncate", done: true)
                state.withLock { s in
                    s.truncatedSinceActivity = true
                    s.lastCheckpoint = now
                    // The checkpoint's own marker moved the head: not activity.
                    // try?: a head that cannot be read now is read at the next round
                    s.lastHead = (try? coordinator.currentHistoryToken()) ?? s.lastHead
                }
            } catch {
                SharingMetrics.checkpoint(mode: "truncate", done: false)
                Self.logger.debug("truncating checkpoint deferred: \(error)")
            }
        } else if sinceCheckpoint > .seconds(5) {
            do {
                try coordinator.checkpoint(.passive)
                SharingMetrics.checkpoint(mode: "passive", done: true)
            } catch {
                SharingMetrics.checkpoint(mode: "passive", done: false)
                Self.logger.debug("passive checkpoint deferred: \(error)")
            }
            state.withLock { $0.lastCheckpoint = now }
        }
    }
}
