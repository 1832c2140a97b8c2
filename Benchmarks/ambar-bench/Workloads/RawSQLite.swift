import Foundation
import GRDBSQLite

/// The physical floor: SQLite's C API with prepared statements and static bindings, WAL and
/// synchronous=NORMAL (docs/benchmarks/README.md says how each baseline is set up).
final class RawDatabase {
    private var handle: OpaquePointer?
    var db: OpaquePointer { handle! }

    init(path: String) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw BenchError("open \(path) failed")
        }
        try exec("PRAGMA journal_mode = WAL")
        try exec("PRAGMA synchronous = NORMAL")
        sqlite3_busy_timeout(handle, 10_000)
    }

    deinit { sqlite3_close_v2(handle) }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("prepare \(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        return statement
    }

    func step(_ statement: OpaquePointer) throws {
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw BenchError("step: \(String(cString: sqlite3_errmsg(handle)))")
        }
        sqlite3_reset(statement)
    }

    /// Inserts rows `range` with one prepared statement; row `i` gets `uid(i)` and `name(i)`
    /// (taken from a generated dataset, or made on the fly so nothing is held in memory).
    func insert(_ range: Range<Int>, uid: (Int) -> String, name: (Int) -> String) throws {
        let statement = try prepare("INSERT INTO item (id, uid, name, score, payload, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(statement) }
        try Dataset.payload.withUnsafeBytes { payload in
            for i in range {
                sqlite3_bind_int64(statement, 1, Int64(i + 1))
                try uid(i).withCString { uid in
                    try name(i).withCString { name in
                        sqlite3_bind_text(statement, 2, uid, -1, nil)
                        sqlite3_bind_text(statement, 3, name, -1, nil)
                        sqlite3_bind_double(statement, 4, Double(i))
                        sqlite3_bind_blob(statement, 5, payload.baseAddress, Int32(payload.count), nil)
                        sqlite3_bind_int64(statement, 6, Int64(i))
                        try step(statement)
                    }
                }
            }
        }
    }

    /// Inserts rows `range` of the dataset.
    func insert(_ data: Dataset, _ range: Range<Int>) throws {
        try insert(range, uid: { data.uids[$0] }, name: { data.names[$0] })
    }

    /// Every row, stepped into structs.
    func fetchAll() throws -> [PlainItem] {
        let statement = try prepare("SELECT id, uid, name, score, payload, updated_at FROM item")
        defer { sqlite3_finalize(statement) }
        var items: [PlainItem] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            let uid = String(cString: sqlite3_column_text(statement, 1))
            let name = String(cString: sqlite3_column_text(statement, 2))
            let bytes = sqlite3_column_blob(statement, 4)
            let payload = bytes.map { Data(bytes: $0, count: Int(sqlite3_column_bytes(statement, 4))) } ?? Data()
            items.append(
                PlainItem(
                    id: sqlite3_column_int64(statement, 0), uid: uid, name: name,
                    score: sqlite3_column_double(statement, 3), payload: payload,
                    updatedAt: sqlite3_column_int64(statement, 5)))
        }
        return items
    }

    /// `UPDATE … WHERE uid = ?` for each index, in one transaction.
    func update(_ data: Dataset, _ indices: [Int]) throws {
        let statement = try prepare("UPDATE item SET score = ?, updated_at = ? WHERE uid = ?")
        defer { sqlite3_finalize(statement) }
        try exec("BEGIN IMMEDIATE")
        for i in indices {
            sqlite3_bind_double(statement, 1, -Double(i))
            sqlite3_bind_int64(statement, 2, Int64(-i))
            try data.uids[i].withCString { uid in
                sqlite3_bind_text(statement, 3, uid, -1, nil)
                try step(statement)
            }
        }
        try exec("COMMIT")
    }
}
