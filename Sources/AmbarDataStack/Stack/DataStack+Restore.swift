import AmbarCore
import AmbarSQLite
import Foundation

extension DataStack {
    /// Replaces the SQLite store at `store` with the backup at `backup`, safely while other
    /// processes have the store open.
    ///
    /// The backup is checked first — an SQLite database that passes its integrity check, an
    /// Ambar store, the same store (its UUID) unless `allowingAnotherStore`, and one `model`
    /// opens (a copy of it is migrated if needed); nothing changes when a check fails. Then,
    /// holding the store's write lock so that no process commits meanwhile, the copy takes the
    /// store's place and the replaced store is kept aside (`<store>.replaced-<UTC time>`, with its
    /// `-wal` and `-shm`).
    ///
    /// The restored ledger continues after the replaced one: its head and purge point are moved
    /// one past the replaced store's head, and a marker transaction is recorded. Processes that had
    /// the old file open get ``AmbarError/storeReplaced(path:)`` at their next write, and sharing
    /// processes stop at their next check (within a poll interval) — a service exits non-zero and
    /// its service manager restarts it on the restored store. Every durable consumer and sharing
    /// process then finds its position expired (``AmbarError/historyExpired(after:purgedThrough:)``)
    /// and reconciles, since the store went back in time; no token ever names two transactions.
    ///
    /// ```swift
    /// let report = try DataStack.restoreStore(at: storeURL, from: backupURL, model: model)
    /// print("restored; the replaced store is at \(report.keptAside.path)")
    /// ```
    ///
    /// - Throws: ``AmbarError/invalidArgument(_:)`` (no backup, another store's backup),
    ///   ``AmbarError/storeDamaged(path:reason:)`` (the backup fails its integrity check),
    ///   ``AmbarError/storeCannotOpen(path:reason:cause:)`` (not an Ambar store, no store to replace,
    ///   the files cannot be moved), or the model's errors when it cannot open the backup.
    public static func restoreStore(at store: URL, from backup: URL, model: ManagedObjectModel, allowingAnotherStore: Bool = false) throws(AmbarError)
        -> StoreRestoreReport
    {
        try SQLiteStoreRestore.restore(store: store, from: backup, model: model, allowingAnotherStore: allowingAnotherStore)
    }
}
