import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import Logging

/// The connection of its own on which a process that follows the ledger reads it, with the rows
/// the new transactions changed, in one read transaction (``SQLiteStore/ledgerPage(after:limit:rowsOf:)``).
///
/// A follower reads after every doorbell, right after another process's commit. Through the
/// store's pool that was two pooled reads (the ledger page, then the rows), each paying the pool's
/// checkout and its own transaction, and SQLite dropping the connection's page cache at each. One
/// connection that only this reader uses, opened once and read-only, keeps its prepared statements
/// and pays one transaction per page.
final class SQLiteLedgerReader: @unchecked Sendable {
    static let logger = Logger(label: "ambar.store.ledger-reader")
    private let path: String
    private let busyTimeout: TimeInterval
    private let lock = NSLock()
    private var connection: DatabaseQueue?
    private var isClosed = false

    init(path: String, busyTimeout: TimeInterval) {
        self.path = path
        self.busyTimeout = busyTimeout
    }

    /// Runs `body` in one read transaction on the reader's connection (opened at first use).
    /// One caller at a time; others wait.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if isClosed { throw AmbarError.storeDeleted }
        let connection = try self.connection ?? open()
        return try connection.inDatabase { db in
            try db.cachedStatement(sql: "BEGIN DEFERRED").execute()
            do {
                let result = try body(db)
                try db.cachedStatement(sql: "COMMIT").execute()
                return result
            } catch {
                // The read's own error is the one to report; a failed ROLLBACK is only logged
                // (SQLite ends the transaction with the connection anyway).
                do {
                    try db.cachedStatement(sql: "ROLLBACK").execute()
                } catch let rollback {
                    Self.logger.warning("ending a failed ledger read failed too", metadata: ["path": "\(path)", "error": "\(rollback)"])
                }
                throw error
            }
        }
    }

    private func open() throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "ambar.ledger-reader"
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        self.connection = connection
        return connection
    }

    /// Closes the connection; later reads throw ``AmbarError/storeDeleted``.
    func close() {
        lock.lock()
        defer { lock.unlock() }
        isClosed = true
        do {
            try connection?.close()
        } catch {
            Self.logger.warning("closing the ledger reader's connection failed", metadata: ["path": "\(path)", "error": "\(error)"])
        }
        connection = nil
    }
}
