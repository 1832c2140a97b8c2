import Foundation
import GRDB

/// The dataset's row as a GRDB Codable record.
struct GRDBItem: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
    var id: Int64
    var uid: String
    var name: String
    var score: Double
    var payload: Data
    // swift-format-ignore: AlwaysUseLowerCamelCase
    var updated_at: Int64  // the column's name, as GRDB's Codable record maps it
}

/// GRDB doing the same work as the raw baseline: cached statements, and Codable records.
struct GRDBBaseline {
    let pool: DatabasePool

    init(path: String) throws {
        pool = try DatabasePool(path: path)
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
    }

    func createTable() throws { try pool.write { db in try db.execute(sql: Dataset.createTable) } }

    func insertWithStatement(_ data: Dataset) throws {
        try pool.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO item (id, uid, name, score, payload, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
            for i in 0..<data.count {
                try statement.execute(arguments: [Int64(i + 1), data.uids[i], data.names[i], Double(i), data.payload, Int64(i)])
            }
        }
    }

    func insertRecords(_ data: Dataset) throws {
        try pool.write { db in
            for i in 0..<data.count {
                try GRDBItem(id: Int64(i + 1), uid: data.uids[i], name: data.names[i], score: Double(i), payload: data.payload, updated_at: Int64(i)).insert(db)
            }
        }
    }

    func fetchWithCursor() throws -> [PlainItem] {
        try pool.read { db in
            var items: [PlainItem] = []
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, uid, name, score, payload, updated_at FROM item")
            while let row = try cursor.next() {
                items.append(PlainItem(id: row[0], uid: row[1], name: row[2], score: row[3], payload: row[4], updatedAt: row[5]))
            }
            return items
        }
    }

    func fetchRecords() throws -> [GRDBItem] { try pool.read { db in try GRDBItem.fetchAll(db) } }

    func update(_ data: Dataset, _ indices: [Int]) throws {
        try pool.write { db in
            let statement = try db.cachedStatement(sql: "UPDATE item SET score = ?, updated_at = ? WHERE uid = ?")
            for i in indices { try statement.execute(arguments: [-Double(i), Int64(-i), data.uids[i]]) }
        }
    }

    func smallSaves(_ data: Dataset, count: Int) throws {
        for i in 0..<count {
            try pool.write { db in
                try db.execute(
                    sql: "INSERT INTO item (id, uid, name, score, payload, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [Int64(i + 1), data.uids[i], data.names[i], Double(i), data.payload, Int64(i)])
            }
        }
    }
}
