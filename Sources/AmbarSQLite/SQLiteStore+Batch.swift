import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite

extension SQLiteStore {
    /// Inserts rows directly, each a dictionary of attribute values; one transaction.
    package func batchInsert(entity: String, rows: [[String: AttributeValue]], author: String?) throws(AmbarError) -> (ids: [ManagedObjectID], token: Int64?) {
        let layout = try model.resolved.layout(entity)
        guard let entityID = entityIDs[layout.name] else { throw .unknownEntity(entity) }
        // Validate everything before writing anything.
        let prepared = try BatchValidation.insertRows(rows, layout: layout)
        let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + layout.storedAttributes.map { quoted(layout.attributeColumns[$0] ?? "") }
        let sql =
            "INSERT INTO \(quoted(layout.rootName)) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        return try write("batch insert") { db in
            try SQLiteSchema.checkModelIsCurrent(db, model: model)
            let first = try allocate(db, root: layout.rootName, count: prepared.count)
            // Values are bound straight from the validated rows (as a context's save does).
            let handle = try db.cachedStatement(sql: sql).sqliteStatement
            defer {
                sqlite3_reset(handle)
                sqlite3_clear_bindings(handle)
            }
            var keys: [Int64] = []
            keys.reserveCapacity(prepared.count)
            for (offset, values) in prepared.enumerated() {
                let pk = first + Int64(offset)
                sqlite3_bind_int64(handle, 1, pk)
                sqlite3_bind_int64(handle, 2, entityID)
                sqlite3_bind_int64(handle, 3, 1)
                for (n, i) in layout.storedAttributes.enumerated() { SQLiteValues.bind(values[i], to: handle, at: Int32(n + 4)) }
                guard try SQLiteValues.stepInsert(handle, db) else {
                    throw AmbarError.constraintViolation(entity: entity, attributes: layout.uniquenessConstraints.first ?? [], values: [], existing: nil)
                }
                keys.append(pk)
            }
            var entry = LedgerEntry(author: author, contextName: "batch insert")
            entry.record(entity: layout.name, .insert, primaryKeys: keys)
            let scope = scopes.scope(layout.name)
            let ids = keys.map { ManagedObjectID(scope: scope, primaryKey: $0) }
            return (ids, try writeLedger(db, entry))
        }
    }

    /// Sets `values` on every object matching the query; bumps their versions; one transaction.
    package func batchUpdate(_ query: StoreQuery, values: [String: AttributeValue], author: String?) throws(AmbarError) -> (
        ids: [ManagedObjectID], token: Int64?
    ) {
        let layout = try model.resolved.layout(query.entity)
        guard !values.isEmpty else { return ([], nil) }
        var assignments = ["Z_OPT = Z_OPT + 1"]
        var arguments: [DatabaseValue] = []
        for (column, value) in try BatchValidation.updateAssignments(values, layout: layout) {
            assignments.append("\(quoted(column)) = ?")
            arguments.append(SQLiteValues.databaseValue(value))
        }
        let (select, selectArguments, _) = try select({ "\($0).Z_PK, \($0).Z_ENT" }, query)
        return try write("batch update") { db in
            try SQLiteSchema.checkModelIsCurrent(db, model: model)
            let ids = try matchingIDs(db, select, selectArguments)
            try db.execute(
                sql: "UPDATE \(quoted(layout.rootName)) SET \(assignments.joined(separator: ", ")) WHERE Z_PK \(StatementShape.inIDList)",
                arguments: StatementArguments(arguments + [StatementShape.idList(ids.compactMap(\.primaryKey)).databaseValue]))
            var entry = LedgerEntry(author: author, contextName: "batch update")
            // Every row changed the same properties: their ledger list is worked out once.
            let changed = LedgerEntry.ledgerProperties(values.keys)
            for id in ids { entry.record(id, .update, ledgerProperties: changed) }
            return (ids, try writeLedger(db, entry))
        }
    }

    /// Deletes every object matching the query (and their join rows), bypassing delete rules and
    /// contexts; one transaction.
    package func batchDelete(_ query: StoreQuery, author: String?) throws(AmbarError) -> (ids: [ManagedObjectID], token: Int64?) {
        let layout = try model.resolved.layout(query.entity)
        let (select, selectArguments, _) = try select({ "\($0).Z_PK, \($0).Z_ENT" }, query)
        return try write("batch delete") { db in
            try SQLiteSchema.checkModelIsCurrent(db, model: model)
            let ids = try matchingIDs(db, select, selectArguments)
            let list: StatementArguments = [StatementShape.idList(ids.compactMap(\.primaryKey))]
            try db.execute(sql: "DELETE FROM \(quoted(layout.rootName)) WHERE Z_PK \(StatementShape.inIDList)", arguments: list)
            for join in model.resolved.joinTables {
                if join.sourceRoot == layout.rootName {
                    try db.execute(sql: "DELETE FROM \(quoted(join.table)) WHERE src \(StatementShape.inIDList)", arguments: list)
                }
                if join.destinationRoot == layout.rootName {
                    try db.execute(sql: "DELETE FROM \(quoted(join.table)) WHERE dst \(StatementShape.inIDList)", arguments: list)
                }
            }
            var entry = LedgerEntry(author: author, contextName: "batch delete")
            for id in ids { entry.record(id, .delete) }
            return (ids, try writeLedger(db, entry))
        }
    }

    private func matchingIDs(_ db: Database, _ sql: String, _ arguments: [DatabaseValue]) throws -> [ManagedObjectID] {
        var ids: [ManagedObjectID] = []
        for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)) {
            guard let scope = entityScopes[row[1]] else { continue }
            ids.append(ManagedObjectID(scope: scope, primaryKey: row[0]))
        }
        return ids
    }
}
