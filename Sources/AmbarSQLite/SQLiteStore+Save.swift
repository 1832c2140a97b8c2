import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite

extension SQLiteStore {
    /// Applies a change set in one IMMEDIATE transaction, by the rules of ``SaveWork``.
    package func save(_ changes: ChangeSet) throws(AmbarError) -> SaveOutcome {
        try write("save") { db in
            do {
                return try SaveWork.perform(model: model, transaction: SQLiteSaveTransaction(store: self, db: db), changes: changes)
            } catch {
                // The model is checked by the save's last statement (the ledger's). A store
                // migrated meanwhile whose tables no longer take this model's statements fails
                // earlier: say that, rather than what the statement met.
                throw SQLiteSchema.migratedMeanwhile(db, model: model) ?? error
            }
        }
    }
}

/// A save's statements on an SQLite connection inside its IMMEDIATE transaction. Statements are
/// prepared once per connection (GRDB's cache) and inserts bind values straight into SQLite.
struct SQLiteSaveTransaction: SaveTransaction {
    let store: SQLiteStore
    let db: Database
    /// The last UPDATE statement, reused while the updates keep its shape.
    let updates = UpdateStatementCache()

    var storeIdentifier: String { store.identifier }
    var entityIDs: [String: Int64] { store.entityIDs }

    func receiptToken(_ key: String) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT token FROM ambar_receipts WHERE key = ?"), arguments: [key])
    }

    /// From the store's reserve, refilled in this transaction when it runs dry.
    func allocate(root: String, count: Int) throws -> [Int64] {
        let first = try store.keyReserve.first(db, root: root, count: count) { n in try store.allocate(db, root: root, count: n) }
        return Array(first..<(first + Int64(count)))
    }

    func rows(_ rootLayout: EntityLayout, columns: [String], matching keys: [[StoredScalar]]) throws -> [StoreRow] {
        let spec = try store.spec(for: rootLayout)
        var result: [StoreRow] = []
        var last: RowSpec.LastEntity = nil
        func collect(_ statement: Statement) throws {
            let cursor = try Row.fetchCursor(statement)
            while try cursor.next() != nil {
                if let row = store.readRow(statement.sqliteStatement, spec, last: &last) { result.append(row) }
            }
        }
        if columns.count == 1 {
            let column = "t0.\(quoted(columns[0]))"
            for start in stride(from: 0, to: keys.count, by: 500) {
                let chunk = StatementShape.padded(Array(keys[start..<min(start + 500, keys.count)]))
                let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                let statement = try db.cachedStatement(
                    sql: "SELECT \(spec.selectListT0) FROM \(quoted(rootLayout.rootName)) AS t0 WHERE \(column) IN (\(placeholders))")
                statement.setUncheckedArguments(StatementArguments(chunk.map { SQLiteValues.databaseValue($0[0]) }))
                try collect(statement)
            }
        } else {
            let condition = columns.map { "t0.\(quoted($0)) = ?" }.joined(separator: " AND ")
            let statement = try db.cachedStatement(sql: "SELECT \(spec.selectListT0) FROM \(quoted(rootLayout.rootName)) AS t0 WHERE \(condition) LIMIT 1")
            for key in keys {
                statement.setUncheckedArguments(StatementArguments(key.map(SQLiteValues.databaseValue)))
                try collect(statement)
            }
        }
        return result
    }

    func currentRow(_ layout: EntityLayout, primaryKey: Int64) throws -> StoreRow? {
        let spec = try store.spec(for: layout)
        let statement = try db.cachedStatement(sql: "SELECT \(spec.selectListT0) FROM \(quoted(layout.rootName)) AS t0 WHERE t0.Z_PK = ?")
        statement.setUncheckedArguments([primaryKey])
        let cursor = try Row.fetchCursor(statement)
        guard try cursor.next() != nil else { return nil }
        var last: RowSpec.LastEntity = nil
        return store.readRow(statement.sqliteStatement, spec, last: &last)
    }

    /// (The IMMEDIATE transaction keeps every other writer out until it ends.)
    func existingPrimaryKeys(root: String, _ primaryKeys: [Int64]) throws -> Set<Int64> {
        var found = Set<Int64>()
        for chunk in stride(from: 0, to: primaryKeys.count, by: 500) {
            let part = Array(primaryKeys[chunk..<min(chunk + 500, primaryKeys.count)])
            let marks = Array(repeating: "?", count: part.count).joined(separator: ",")
            found.formUnion(try Int64.fetchAll(db, sql: "SELECT Z_PK FROM \(quoted(root)) WHERE Z_PK IN (\(marks))", arguments: StatementArguments(part)))
        }
        return found
    }

    func deleteRow(root: String, primaryKey: Int64, expectedVersion: Int64?) throws -> Bool {
        if let expectedVersion {
            try db.cachedStatement(sql: "DELETE FROM \(quoted(root)) WHERE Z_PK = ? AND Z_OPT = ?").execute(arguments: [primaryKey, expectedVersion])
        } else {
            try db.cachedStatement(sql: "DELETE FROM \(quoted(root)) WHERE Z_PK = ?").execute(arguments: [primaryKey])
        }
        return db.changesCount > 0
    }

    func deleteJoinRows(table: String, column: String, primaryKey: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM \(quoted(table)) WHERE \(column) = ?").execute(arguments: [primaryKey])
    }

    func updateRow(root: String, primaryKey: Int64, version: Int64, assignments: [(column: String, value: StoredScalar)], expectedVersion: Int64?) throws
        -> Bool
    {
        // Bound straight into SQLite, as inserts are.
        let handle = try updates.statement(db, root: root, assignments: assignments, checksVersion: expectedVersion != nil).sqliteStatement
        defer { sqlite3_clear_bindings(handle) }
        sqlite3_reset(handle)
        sqlite3_bind_int64(handle, 1, version)
        var index: Int32 = 2
        for (_, value) in assignments {
            SQLiteValues.bind(value, to: handle, at: index)
            index += 1
        }
        sqlite3_bind_int64(handle, index, primaryKey)
        if let expectedVersion { sqlite3_bind_int64(handle, index + 1, expectedVersion) }
        guard try SQLiteValues.stepInsert(handle, db) else { throw ConstraintRefusal() }
        return sqlite3_changes(db.sqliteConnection) > 0
    }

    func insertRows(_ layout: EntityLayout, _ rows: [NewRow]) throws {
        guard let plan = store.insertPlans[layout.name] else { throw AmbarError.unknownEntity(layout.name) }
        let handle = try db.cachedStatement(sql: plan.sql).sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        for row in rows {
            sqlite3_bind_int64(handle, 1, row.primaryKey)
            sqlite3_bind_int64(handle, 2, plan.entityID)
            sqlite3_bind_int64(handle, 3, 1)
            var index: Int32 = 4
            for i in layout.storedAttributes {
                SQLiteValues.bind(row.values[i], to: handle, at: index)
                index += 1
            }
            for rel in plan.toOne {
                let destination = row.toOne[safe: rel.index] ?? nil
                if let key = destination?.primaryKey { sqlite3_bind_int64(handle, index, key) } else { sqlite3_bind_null(handle, index) }
                index += 1
                if rel.entityColumn != nil {
                    if let number = destination.flatMap({ store.entityIDs[$0.entityName] }) {
                        sqlite3_bind_int64(handle, index, number)
                    } else {
                        sqlite3_bind_null(handle, index)
                    }
                    index += 1
                }
            }
            guard try SQLiteValues.stepInsert(handle, db) else { throw ConstraintRefusal(values: row.values, toOne: row.toOne) }
        }
    }

    func joinRows(table: String, ownColumn: String, otherColumn: String, owners: [Int64]) throws -> [JoinPair] {
        var pairs: [JoinPair] = []
        for start in stride(from: 0, to: owners.count, by: 500) {
            let part = Array(owners[start..<min(start + 500, owners.count)])
            let marks = Array(repeating: "?", count: part.count).joined(separator: ",")
            for row in try Row.fetchAll(
                db, sql: "SELECT \(ownColumn), \(otherColumn) FROM \(quoted(table)) WHERE \(ownColumn) IN (\(marks))", arguments: StatementArguments(part))
            {
                pairs.append(JoinPair(owner: row[0], destination: row[1]))
            }
        }
        return pairs
    }

    func setJoinRow(table: String, source: Int64, destination: Int64, present: Bool) throws {
        if present {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO \(quoted(table)) (src, dst) VALUES (?, ?)").execute(arguments: [source, destination])
        } else {
            try db.cachedStatement(sql: "DELETE FROM \(quoted(table)) WHERE src = ? AND dst = ?").execute(arguments: [source, destination])
        }
    }

    func setOrder(_ mapping: RelationshipMapping, column: String, owner: Int64, destination: Int64, position: Int) throws {
        switch mapping {
        case .inverseForeignKey(let root, let foreignKey):
            try db.cachedStatement(sql: "UPDATE \(quoted(root)) SET \(quoted(column)) = ? WHERE Z_PK = ? AND \(quoted(foreignKey)) = ?")
                .execute(arguments: [position, destination, owner])
        case .joinTable(let table, let own, let other):
            try db.cachedStatement(sql: "UPDATE \(quoted(table)) SET \(quoted(column)) = ? WHERE \(own) = ? AND \(other) = ?")
                .execute(arguments: [position, owner, destination])
        case .foreignKey, .transient:
            break
        }
    }

    func writeLedger(_ entry: LedgerEntry) throws -> Int64? {
        try store.writeLedger(db, entry)
    }

    /// A savepoint costs two statements in memory: worth it from the first insert.
    var optimisticInsertMinimum: Int { 1 }

    func execute(_ step: SavepointStep) throws {
        // Keys reserved inside the savepoint go back with it.
        if step == .rollBack { store.keyReserve.discard() }
        try db.cachedStatement(sql: step.rawValue).execute()
    }

    func writeReceipt(_ key: String, token: Int64) throws {
        try db.cachedStatement(sql: "INSERT INTO ambar_receipts (key, token, saved) VALUES (?, ?, ?)").execute(
            arguments: [key, token, Date().timeIntervalSince1970])
    }

    func moveConsumer(_ move: ConsumerMove) throws {
        let now = Date().timeIntervalSince1970
        if let fence = move.fence {
            // In the write transaction: no other copy can take the consumer before this commits.
            let holder = try SQLiteStore.ownership(db, move.consumer)
            guard let holder, holder.owner == fence.owner, holder.epoch == fence.epoch else {
                throw AmbarError.consumerLeaseLost(consumer: move.consumer, holder: holder.map { "\($0.owner)" })
            }
        }
        if let expected = move.expected {
            try db.cachedStatement(sql: "UPDATE ambar_cursors SET token = ?, last_seen = ?, lease = NULL WHERE consumer = ? AND token = ? AND lease IS NULL")
                .execute(arguments: [move.token, now, move.consumer, expected])
        } else {
            try db.cachedStatement(sql: "INSERT INTO ambar_cursors (consumer, token, last_seen, lease) VALUES (?, ?, ?, NULL) ON CONFLICT(consumer) DO NOTHING")
                .execute(arguments: [move.consumer, move.token, now])
        }
        guard db.changesCount == 0 else { return }
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT token, lease FROM ambar_cursors WHERE consumer = ?"), arguments: [move.consumer])
        if let lease = row?["lease"] as Double? {
            throw AmbarError.consumerNameTaken(consumer: move.consumer, lease: lease)
        }
        throw AmbarError.consumerPositionMoved(consumer: move.consumer, expected: move.expected, found: row?["token"] as Int64?)
    }

    func writeOutbox(_ move: ConsumerMove) throws {
        let now = Date().timeIntervalSince1970
        let insert = try db.cachedStatement(
            sql:
                "INSERT INTO ambar_outbox (consumer, key, topic, payload, token, recorded, attempts, not_before) VALUES (?, ?, ?, ?, ?, ?, 0, 0) ON CONFLICT(key) DO NOTHING"
        )
        for (index, message) in move.outbox.enumerated() {
            let key = message.key(in: move, index: index)
            try insert.execute(arguments: [move.consumer, key, message.topic, message.payload, move.token, now])
            guard db.changesCount > 0 else { throw AmbarError.outboxKeyTaken(key: key) }
        }
    }
}
