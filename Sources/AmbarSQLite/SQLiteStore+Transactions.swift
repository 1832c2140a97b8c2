import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite
import Logging

// Writing: transactions (IMMEDIATE, with their errors mapped) and primary-key allocation.

extension SQLiteStore {
    // MARK: - Writing helpers

    /// Runs `body` in an IMMEDIATE transaction on the writer. `lockWait` bounds how long BEGIN
    /// waits for another connection's write lock (nil: the connection's busy timeout); past it,
    /// SQLITE_BUSY comes out as a storage error and nothing is written.
    func write<T>(_ operation: String, lockWait: TimeInterval? = nil, _ body: (Database) throws -> T) throws(AmbarError) -> T {
        do {
            return try writer.writeWithoutTransaction { db in
                let restore = lockWait.flatMap { Self.shortenBusyTimeout(db, to: $0) }
                defer { restore?() }
                return try Self.immediateTransaction(db, path: location, operation: operation) {
                    // Checked holding the write lock: a restore takes it on the old file before
                    // putting the new one in place, so nothing is written to a replaced file.
                    try verifyIdentity()
                    return try body(db)
                }
            }
        } catch {
            // The failed transaction may have reserved keys that its rollback gave back.
            keyReserve.discard()
            throw SQLiteValues.wrap(error, operation)
        }
    }

    /// Runs `body` in an IMMEDIATE transaction and commits it; on any error, rolls back and
    /// rethrows. A full disk or a read-only file system comes out as
    /// ``AmbarError/storeFull(path:operation:)`` or ``AmbarError/storeReadOnly(path:reason:)``:
    /// the system error behind SQLite's code is read before the rollback can overwrite it.
    static func immediateTransaction<T>(_ db: Database, path: String, operation: String, _ body: () throws -> T) throws -> T {
        try step(db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION"), db)
        do {
            let result = try body()
            try step(db.cachedStatement(sql: "COMMIT TRANSACTION"), db)
            return result
        } catch {
            // SQLite's unix VFS does not always record the errno of a failed write (a write past
            // RLIMIT_FSIZE leaves it 0); the thread's errno, read before anything else runs, has it.
            let threadErrno = errno
            let recorded = sqlite3_system_errno(db.sqliteConnection)
            let systemErrno = recorded != 0 ? recorded : threadErrno
            if db.isInsideTransaction {
                do {
                    try db.execute(sql: "ROLLBACK TRANSACTION")
                } catch let rollbackError {
                    logger.error("rolling back a failed \(operation) failed too", metadata: ["path": "\(path)", "error": "\(rollbackError)"])
                }
            }
            if let error = error as? DatabaseError, let failure = SQLiteValues.resourceFailure(error, systemErrno: systemErrno, path: path, operation) {
                throw failure
            }
            throw error
        }
    }

    /// Sets `db`'s busy timeout to `seconds` and returns what puts the configured one back; nil
    /// (nothing changed) when the connection waits through a busy callback rather than a timeout.
    private static func shortenBusyTimeout(_ db: Database, to seconds: TimeInterval) -> (() -> Void)? {
        guard case .timeout(let configured) = db.configuration.busyMode else { return nil }
        let connection = db.sqliteConnection
        sqlite3_busy_timeout(connection, Self.milliseconds(min(seconds, configured)))
        return { sqlite3_busy_timeout(connection, Self.milliseconds(configured)) }
    }

    private static func milliseconds(_ seconds: TimeInterval) -> Int32 {
        seconds.isNaN ? 0 : Int32((min(max(seconds, 0), 86_400) * 1000).rounded())
    }

    /// Reserves `count` keys in `root` inside the current transaction; returns the first.
    func allocate(_ db: Database, root: String, count: Int) throws -> Int64 {
        // Two plain statements rather than one UPDATE … RETURNING: that one needs a statement
        // journal, which costs more than the whole rest of a one-object save. The table's own
        // maximum covers rows written by other SQLite clients.
        guard let reserved = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max_pk FROM ambar_primarykeys WHERE root = ?"), arguments: [root]) else {
            throw AmbarError.unknownEntity(root)
        }
        let used = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(Z_PK) FROM \(quoted(root))")) ?? 0
        let last = max(reserved, used) + Int64(count)
        try db.cachedStatement(sql: "UPDATE ambar_primarykeys SET max_pk = ? WHERE root = ?").execute(arguments: [last, root])
        return last - Int64(count) + 1
    }

    package func allocatePrimaryKeys(entity: String, count: Int) throws(AmbarError) -> [Int64] {
        let layout = try model.resolved.layout(entity)
        guard count > 0 else { return [] }
        let first = try write("allocate primary keys") { db in try allocate(db, root: layout.rootName, count: count) }
        return (0..<Int64(count)).map { first + $0 }
    }
}

extension SQLiteStore {
    /// Runs a statement that returns no rows (BEGIN, COMMIT) straight through SQLite: every save
    /// runs two, and GRDB's `execute()` costs more than the step itself here.
    fileprivate static func step(_ statement: Statement, _ db: Database) throws {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            // The caller reads the thread's errno first (a failed write's cause): keep it.
            let threadErrno = errno
            let error = DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            errno = threadErrno
            throw error
        }
        sqlite3_reset(handle)
    }
}
