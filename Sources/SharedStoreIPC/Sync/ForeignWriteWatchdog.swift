import AmbarCore
import AmbarDataStack
import AmbarSQLite
import Logging

/// Notices writes to the store made outside Ambar (a plain `sqlite3` client, a script): the file
/// changed (`PRAGMA data_version`) but neither the ledger (its head, its purges) nor any
/// consumer's cursor did. A truncating checkpoint writes a ledger marker, a purge counts itself,
/// so Ambar's own maintenance is attributed too.
///
/// A foreign write in the same interval as an Ambar one is not told apart; the next one is.
final class ForeignWriteWatchdog: Sendable {
    private struct Fingerprint: Equatable {
        var history: HistorySummary
        var cursors: [HistoryCursor]
    }

    private let coordinator: PersistentStoreCoordinator
    private let detector: StoreChangeDetector
    private let last: Locked<Fingerprint>
    /// The last check's failure, if it failed (logged once per change).
    private let failure = Locked<String?>(nil)
    static let logger = Logger(label: "ambar.sync.watchdog")

    /// A watchdog for `coordinator`'s store, or `nil` when its backend cannot tell (no detector).
    init?(coordinator: PersistentStoreCoordinator) throws(AmbarError) {
        guard let detector = try coordinator.makeChangeDetector() else { return nil }
        _ = try detector.hasChanged()
        self.coordinator = coordinator
        self.detector = detector
        self.last = Locked(Fingerprint(history: try coordinator.historySummary(), cursors: try coordinator.historyCursors()))
    }

    /// Whether the store changed outside Ambar since the last call. A check that cannot read the
    /// store counts as "no" and the next call looks again; the failure is logged when it starts
    /// and when checks work again, so a watchdog that cannot see is never silent.
    func foreignWriteHappened() -> Bool {
        let now: Fingerprint
        do throws(AmbarError) {
            guard try detector.hasChanged() else { return noteOutcome(nil) }
            now = Fingerprint(history: try coordinator.historySummary(), cursors: try coordinator.historyCursors())
        } catch {
            return noteOutcome(error)
        }
        _ = noteOutcome(nil)
        return last.withLock { previous -> Bool in
            defer { previous = now }
            return previous == now
        }
    }

    /// Logs a change between "checks fail" and "checks work"; returns false (no foreign write seen).
    private func noteOutcome(_ error: AmbarError?) -> Bool {
        let message = error.map { "\($0)" }
        let changed = failure.withLock { last -> Bool in
            defer { last = message }
            return last != message
        }
        if changed, let message {
            Self.logger.warning("cannot check the store for writes made outside Ambar; retrying at the next check", metadata: ["error": "\(message)"])
        } else if changed {
            Self.logger.notice("checking the store for writes made outside Ambar works again")
        }
        return false
    }
}
