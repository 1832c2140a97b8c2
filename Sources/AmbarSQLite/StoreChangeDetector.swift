import AmbarCore
import AmbarSQL
import Foundation
import GRDB

/// Tells whether anyone — another process, another connection, even a plain SQLite client — has
/// committed to the store since the last look, using SQLite's `PRAGMA data_version` on a
/// connection of its own. Cheap enough to poll several times a second.
package final class StoreChangeDetector: Sendable {
    private let queue: DatabaseQueue
    private let last: Locked<Int64?>

    init(path: String) throws(AmbarError) {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw .storeCannotOpen(path: path, reason: "\(error)", cause: ErrorCause(error))
        }
        last = Locked(nil)
    }

    /// Whether a commit happened since the previous call (false on the first call).
    package func hasChanged() throws(AmbarError) -> Bool {
        let version: Int64
        do {
            version = try queue.read { db in try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
        } catch {
            throw SQLiteValues.wrap(error, "read data_version")
        }
        return last.withLock { previous in
            defer { previous = version }
            return previous.map { $0 != version } ?? false
        }
    }
}

extension PersistentStoreCoordinator {
    /// A detector of commits made to this store by anyone. `nil` for in-memory stores.
    package func makeChangeDetector() throws(AmbarError) -> StoreChangeDetector? {
        guard case .sqlite(let url) = storeDescription else { return nil }
        return try StoreChangeDetector(path: url.path)
    }

    /// Moves committed pages from the WAL into the database file, so the WAL does not grow without
    /// bound while readers come and go.
    ///
    /// A truncating checkpoint resets the WAL, which other connections see as a change
    /// (`data_version`); it is therefore followed by an empty ledger transaction named
    /// `ambar.checkpoint`, so that watchdogs attribute the change to Ambar.
    package func checkpoint(_ mode: CheckpointMode) throws(AmbarError) {
        try checkUsable()
        try store.checkpoint(mode)
        if mode == .truncate { _ = try store.recordMarker(contextName: "ambar.checkpoint") }
    }
}
