import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite

/// Primary keys an SQLite store took from its allocator (`ambar_primarykeys`) ahead of the saves
/// that use them, so that most saves take theirs without writing the allocator's row.
///
/// A reserve is taken inside a save's transaction, so it holds only if that transaction commits:
/// the store discards every reserve when a write fails (``discard()``). Other Ambar processes
/// allocate above the allocator's committed maximum, so they never take reserved keys. An SQLite
/// client outside Ambar may insert a row with the next key itself; before reserved keys are used,
/// the table's highest key is compared with them, and the reserve is dropped when that client
/// reached it. Keys still held when the process ends are never used (gaps, as Core Data's keys
/// have).
final class SQLiteKeyReserve: Sendable {
    /// Keys reserved beyond a save's need when the reserve runs dry.
    static let batch: Int64 = 32
    private let held = Locked<[String: ClosedRange<Int64>]>([:])

    /// The first of `count` consecutive keys of `root`, inside the current write transaction:
    /// from the reserve, or from `allocate(n)` (which reserves `n` keys in the allocator and
    /// returns the first) when it runs dry.
    func first(_ db: Database, root: String, count: Int, allocate: (Int) throws -> Int64) throws -> Int64 {
        if let range = held.withLock({ $0[root] }), range.count >= count {
            let used = try Self.highestKey(db, root: root)
            if used < range.lowerBound {
                held.withLock { held in
                    let next = range.lowerBound + Int64(count)
                    held[root] = next <= range.upperBound ? next...range.upperBound : nil
                }
                return range.lowerBound
            }
        }
        let first = try allocate(count + Int(Self.batch))
        held.withLock { $0[root] = (first + Int64(count))...(first + Int64(count) + Self.batch - 1) }
        return first
    }

    /// The table's highest key (0 when empty), stepped straight through SQLite: every save that
    /// inserts asks it.
    private static func highestKey(_ db: Database, root: String) throws -> Int64 {
        let handle = try db.cachedStatement(sql: "SELECT max(Z_PK) FROM \(quoted(root))").sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_ROW else {
            if code == SQLITE_DONE { return 0 }
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        return sqlite3_column_int64(handle, 0)  // 0 for NULL: an empty table
    }

    /// Forgets every reserve (a write failed: its reservation may have been rolled back).
    func discard() {
        held.withLock { $0.removeAll() }
    }
}
