import AmbarStack
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

    /// A watchdog for `coordinator`'s store, or `nil` when its backend cannot tell (no detector).
    init?(coordinator: PersistentStoreCoordinator) throws(AmbarError) {
        guard let detector = try coordinator.makeChangeDetector() else { return nil }
        _ = try detector.hasChanged()
        self.coordinator = coordinator
        self.detector = detector
        self.last = Locked(Fingerprint(history: try coordinator.historySummary(), cursors: try coordinator.historyCursors()))
    }

    /// Whether the store changed outside Ambar since the last call. Errors count as "no": the
    /// next call looks again.
    func foreignWriteHappened() -> Bool {
        guard (try? detector.hasChanged()) ?? false,
              let history = try? coordinator.historySummary(),
              let cursors = try? coordinator.historyCursors() else { return false }
        let now = Fingerprint(history: history, cursors: cursors)
        return last.withLock { previous -> Bool in
            defer { previous = now }
            return previous == now
        }
    }
}
