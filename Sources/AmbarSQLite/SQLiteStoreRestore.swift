import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import Logging

/// Replaces an SQLite store with a backup while other processes keep it open (see
/// ``DataStack/restoreStore(at:from:model:allowingAnotherStore:)``).
///
/// The steps: copy the backup beside the store (SQLite's backup API), check the copy (integrity,
/// an Ambar store, the same store unless told otherwise, the model opens it — migrating the copy
/// if needed); then, holding the store's write lock so that no process can commit to it meanwhile:
/// read its ledger head, move the copy's ledger past it (its head one past the old head, purged
/// through it, and a marker transaction), move the store file and its sidecars aside, and rename
/// the copy into place. Processes that had the old file open find at their next write or sharing
/// check that the file at the path is not theirs any more (``AmbarError/storeReplaced(path:)``).
/// Positions recorded before are all behind the new ledger's purge point: every consumer and
/// sharing process reconciles (history expired) instead of resuming on a ledger that went back
/// in time, and no token ever names two different transactions.
package enum SQLiteStoreRestore {
    static let logger = Logger(label: "ambar.store")

    package static func restore(store: URL, from backup: URL, model: ManagedObjectModel, allowingAnotherStore: Bool) throws(AmbarError) -> StoreRestoreReport {
        let store = store.standardizedFileURL
        let backup = backup.standardizedFileURL
        let fileManager = FileManager.default
        guard fileManager.fileExists(atPath: backup.path) else {
            throw .invalidArgument("no backup at \(backup.path)")
        }
        guard backup.path != store.path else { throw .invalidArgument("the backup \(backup.path) is the store itself") }
        guard fileManager.fileExists(atPath: store.path) else {
            throw .storeCannotOpen(path: store.path, reason: "no store to replace there; to start from the backup, copy it to that path")
        }
        let storeUUID = try uuid(of: store)
        let copy = store.deletingLastPathComponent().appendingPathComponent(".\(store.lastPathComponent).restoring-\(getpid())")
        try removeFiles(copy)
        do {
            return try restore(store: store, storeUUID: storeUUID, backup: backup, copy: copy, model: model, allowingAnotherStore: allowingAnotherStore)
        } catch {
            // try?: cleanup; the restore's own error is thrown below
            try? removeFiles(copy)
            throw error
        }
    }

    private static func restore(
        store: URL, storeUUID: String?, backup: URL, copy: URL, model: ManagedObjectModel, allowingAnotherStore: Bool
    ) throws(AmbarError) -> StoreRestoreReport {
        // 1. The copy, checked.
        do {
            let problems = try SQLiteFileCopy.copy(backup, to: copy, readOnly: true)
            guard problems.isEmpty else {
                throw AmbarError.storeDamaged(path: backup.path, reason: "the backup fails its integrity check: \(problems.prefix(3).joined(separator: "; "))")
            }
        } catch let error as AmbarError {
            throw error
        } catch {
            throw .storeCannotOpen(path: backup.path, reason: "cannot read it as an SQLite database: \(error)", cause: ErrorCause(error))
        }
        guard let backupUUID = try uuid(of: copy) else {
            throw .storeCannotOpen(path: backup.path, reason: "it is an SQLite database but not an Ambar store (no store UUID)")
        }
        if let storeUUID, backupUUID != storeUUID, !allowingAnotherStore {
            throw .invalidArgument(
                "the backup \(backup.path) is another store (UUID \(backupUUID)) than the one at \(store.path) (UUID \(storeUUID)); nothing was changed. Restore a backup of this store, or allow another store explicitly"
            )
        }
        // The model must open it (a lightweight migration of the copy, if one is needed).
        let opened = try SQLiteStore.open(.file(copy), model: model)
        let backupHead: Int64
        do {
            backupHead = try opened.currentHistoryToken()
        } catch {
            opened.close()
            throw error
        }

        // 2. Under the old store's write lock: the ledger moved past the old head, the files swapped.
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        let old: DatabaseQueue
        do {
            old = try DatabaseQueue(path: store.path, configuration: configuration)
        } catch {
            opened.close()
            throw .storeCannotOpen(path: store.path, reason: "cannot open the store to replace it: \(error)", cause: ErrorCause(error))
        }
        defer { try? old.close() }  // try?: cleanup; the store being replaced is only read
        let aside = store.deletingLastPathComponent().appendingPathComponent("\(store.lastPathComponent).replaced-\(timestamp())")
        let marker: Int64
        let oldHead: Int64
        do {
            // try?: a log that cannot be folded in now stays beside the store, and is set aside with it
            _ = try? old.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(FULL)") }
            (oldHead, marker) = try old.writeWithoutTransaction { db -> (Int64, Int64) in
                try db.execute(sql: "BEGIN IMMEDIATE TRANSACTION")
                // try?: cleanup; the transaction may have ended already
                defer { try? db.execute(sql: "ROLLBACK TRANSACTION") }
                let head = try SQLiteSchema.ledgerHeadOfAnyLayout(db)
                let marker = try moveLedger(of: opened, past: head, restoredFrom: backup)
                opened.close()
                try removeSidecars(copy)
                try swap(store: store, aside: aside, copy: copy)
                return (head, marker)
            }
        } catch let error as AmbarError {
            opened.close()
            throw error
        } catch {
            opened.close()
            throw .storeCannotOpen(path: store.path, reason: "cannot take the store's write lock to replace it: \(error)", cause: ErrorCause(error))
        }
        logger.notice(
            "restored the store from a backup",
            metadata: ["store": "\(store.path)", "backup": "\(backup.path)", "kept": "\(aside.path)", "marker": "\(marker)"])
        return StoreRestoreReport(
            store: store, backup: backup, keptAside: aside, storeUUID: backupUUID, backupHead: backupHead, replacedHead: oldHead, markerToken: marker)
    }

    /// Moves the copy's ledger past `oldHead`: its head and purge point one past it (every
    /// position recorded in either ledger is then expired), then a marker transaction.
    private static func moveLedger(of copy: SQLiteStore, past oldHead: Int64, restoredFrom backup: URL) throws(AmbarError) -> Int64 {
        try copy.write("restore: move the ledger past the replaced store's") { db in
            let boundary = oldHead + 1
            // Tokens are rowids: a row at the boundary (at the purge point, so nobody reads it)
            // makes the next token one past it.
            if try SQLiteSchema.ledgerHead(db) < boundary {
                try db.execute(
                    sql:
                        "INSERT INTO ambar_transactions (token, timestamp, author, pid, context_name, instance, changes) VALUES (?, ?, NULL, ?, ?, NULL, NULL)",
                    arguments: [boundary, Date().timeIntervalSince1970, Int64(getpid()), "restore boundary"])
            }
            try db.execute(
                sql: """
                    INSERT INTO ambar_metadata (key, value) VALUES ('history_purged_through', ?)
                    ON CONFLICT(key) DO UPDATE SET value = CAST(max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT)
                    """, arguments: [String(boundary)])
        }
        let marker = try copy.recordMarker(contextName: "restore from \(backup.lastPathComponent)")
        // Everything into the main file: the copy moves into place without its WAL.
        try copy.checkpoint(.truncate)
        return marker
    }

    /// Moves the store file and its sidecars aside, then the copy into place, keeping the
    /// store file's owner, group and mode.
    private static func swap(store: URL, aside: URL, copy: URL) throws(AmbarError) {
        var info = stat()
        let hasInfo = stat(store.path, &info) == 0
        for suffix in ["", "-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            guard rename(store.path + suffix, aside.path + suffix) == 0 else {
                let reason = String(cString: strerror(errno))
                if suffix != "" { _ = rename(aside.path, store.path) }  // put the store back
                throw .storeCannotOpen(path: store.path + suffix, reason: "cannot move it aside to restore the backup (\(reason)); the store is unchanged")
            }
        }
        if hasInfo {
            _ = chown(copy.path, info.st_uid, info.st_gid)
            _ = chmod(copy.path, info.st_mode & 0o7777)
        }
        guard rename(copy.path, store.path) == 0 else {
            let reason = String(cString: strerror(errno))
            throw .storeCannotOpen(
                path: store.path,
                reason: "cannot move the restored copy into place (\(reason)); the replaced store is at \(aside.path), the copy at \(copy.path)")
        }
        let directory = open(store.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// The store UUID in a file's metadata; nil when the file is not an Ambar store.
    private static func uuid(of file: URL) throws(AmbarError) -> String? {
        do {
            return try SQLiteFileCopy.storeUUID(of: file)
        } catch {
            throw .storeCannotOpen(path: file.path, reason: "cannot read it: \(error)", cause: ErrorCause(error))
        }
    }

    /// Deletes the copy's sidecars once it is closed and checkpointed; a WAL that still holds
    /// frames is an error (deleting it would lose them, keeping it would replay it into the
    /// store at the path).
    private static func removeSidecars(_ file: URL) throws(AmbarError) {
        let wal = file.path + "-wal"
        // try?: no -wal file left: nothing is in it
        if let size = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? NSNumber)?.intValue, size > 0 {
            throw .storeCannotOpen(path: wal, reason: "the restored copy's log still holds \(size) bytes after its checkpoint; nothing was replaced")
        }
        for suffix in SQLiteStoreRelocation.sidecars where FileManager.default.fileExists(atPath: file.path + suffix) {
            guard unlink(file.path + suffix) == 0 else {
                throw .storeCannotOpen(path: file.path + suffix, reason: "cannot delete it: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Deletes a file and its sidecars, those that exist (a copy a failed restore left).
    private static func removeFiles(_ file: URL) throws(AmbarError) {
        for suffix in [""] + SQLiteStoreRelocation.sidecars where FileManager.default.fileExists(atPath: file.path + suffix) {
            guard unlink(file.path + suffix) == 0 else {
                throw .storeCannotOpen(path: file.path + suffix, reason: "cannot delete it: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The time now, for the name of the replaced store (UTC, sortable).
    private static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: Date())
    }
}
