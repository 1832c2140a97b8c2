import AmbarCore
import AmbarDataStack
import Foundation

extension DataStack {
    /// Replaces the store in the PostgreSQL database `url` names with an archive
    /// ``PersistentStoreCoordinator/backup(to:)`` wrote (`pg_dump --format=custom`), safely while
    /// other processes, on any host, keep using the store.
    ///
    /// The archive is checked first — `pg_restore` reads it, it holds an Ambar store, the same
    /// store (its UUID) unless `allowingAnotherStore`; nothing changes when a check fails. The
    /// restore is then one transaction: it takes every table of the store's schema (waiting up to
    /// 30 s for a moment when no other session uses any of them), replaces every object the
    /// archive holds (`pg_restore --clean`), and moves the ledger's head and purge point one past
    /// the replaced store's head. Primary-key sequences never go back, and the consumers'
    /// positions, ownership leases and standbys are those of the replaced store (they describe the
    /// processes running now). Either all of it commits or nothing changes. Then `model` opens
    /// the restored store (a lightweight migration if the archive is older) and a marker
    /// transaction is recorded.
    ///
    /// Processes keep running: every sharing process and durable consumer finds its position
    /// expired (``AmbarError/historyExpired(after:purgedThrough:)``) at its next ledger read and
    /// reconciles, since the store went back in time; no token ever names two transactions.
    /// Writes that were waiting for the tables commit after the restore, on the restored store.
    ///
    /// ```swift
    /// let report = try DataStack.restoreStore(on: url, from: archiveURL, model: model)
    /// print("restored; the ledger continues at \(report.markerToken)")
    /// ```
    ///
    /// It runs PostgreSQL's own `pg_restore` and `psql` (Debian: `postgresql-client`), at least as
    /// new as the `pg_dump` that wrote the archive.
    ///
    /// - Throws: ``AmbarError/invalidArgument(_:)`` (no archive, another store's archive, a client
    ///   tool missing), ``AmbarError/storeCannotOpen(path:reason:cause:)`` (not an archive of an
    ///   Ambar store), ``AmbarError/storage(operation:code:message:cause:)`` (the tables stayed busy),
    ///   ``AmbarError/serverUnavailable(server:operation:reason:cause:)`` (the server refused the
    ///   restore: nothing was changed), or the model's errors when it cannot open the result.
    public static func restoreStore(on url: PostgresURL, from backup: URL, model: ManagedObjectModel, allowingAnotherStore: Bool = false)
        throws(AmbarError) -> PostgresRestoreReport
    {
        try PostgresRestore.restore(url, from: backup, model: model, allowingAnotherStore: allowingAnotherStore)
    }
}
