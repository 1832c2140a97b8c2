import AmbarCore
import AmbarSQL
import Foundation

extension PostgreSQLStore {
    /// Inserts rows directly, each a dictionary of attribute values; one transaction.
    func batchInsert(entity: String, rows: [[String: AttributeValue]], author: String?) throws(AmbarError) -> (ids: [ManagedObjectID], token: Int64?) {
        let layout = try model.resolved.layout(entity)
        let prepared = try BatchValidation.insertRows(rows, layout: layout)
        return try write("batch insert") { connection in
            let transaction = PostgreSQLSaveTransaction(store: self, connection: connection)
            let keys = try transaction.allocate(root: layout.rootName, count: prepared.count)
            do {
                try transaction.insertRows(layout, zip(keys, prepared).map { NewRow(primaryKey: $0, values: RowValues($1), toOne: []) })
            } catch is ConstraintRefusal {
                throw AmbarError.constraintViolation(entity: entity, attributes: layout.uniquenessConstraints.first ?? [], values: [], existing: nil)
            }
            var entry = LedgerEntry(author: author, contextName: "batch insert")
            entry.record(entity: layout.name, .insert, primaryKeys: keys)
            let scope = scopes.scope(layout.name)
            let ids = keys.map { ManagedObjectID(scope: scope, primaryKey: $0) }
            return (ids, try writeLedger(connection, entry))
        }
    }

    /// Sets `values` on every object matching the query; bumps their versions; one transaction.
    func batchUpdate(_ query: StoreQuery, values: [String: AttributeValue], author: String?) throws(AmbarError) -> (ids: [ManagedObjectID], token: Int64?) {
        let layout = try model.resolved.layout(query.entity)
        guard !values.isEmpty else { return ([], nil) }
        let assignments = try BatchValidation.updateAssignments(values, layout: layout)
        let select = try select({ "\($0).Z_PK, \($0).Z_ENT" }, query)
        let casts = placeholders(root: layout.rootName, columns: assignments.map(\.column), from: 1)
        let set = (["Z_OPT = Z_OPT + 1"] + zip(assignments, casts).map { "\(quoted($0.column)) = \($1)" }).joined(separator: ", ")
        return try write("batch update") { connection in
            let ids = try run(select, on: connection).compactMap(objectID)
            _ = try connection.query(
                "UPDATE \(quoted(layout.rootName)) SET \(set) WHERE Z_PK = ANY($\(assignments.count + 1)::bigint[])",
                assignments.map { PostgreSQLValues.serverValue($0.value) } + [.integerArray(ids.compactMap(\.primaryKey))])
            var entry = LedgerEntry(author: author, contextName: "batch update")
            // Every row changed the same properties: their ledger list is worked out once.
            let changed = LedgerEntry.ledgerProperties(values.keys)
            for id in ids { entry.record(id, .update, ledgerProperties: changed) }
            return (ids, try writeLedger(connection, entry))
        }
    }

    /// Deletes every object matching the query (and their join rows), bypassing delete rules and
    /// contexts; one transaction.
    func batchDelete(_ query: StoreQuery, author: String?) throws(AmbarError) -> (ids: [ManagedObjectID], token: Int64?) {
        let layout = try model.resolved.layout(query.entity)
        let select = try select({ "\($0).Z_PK, \($0).Z_ENT" }, query)
        return try write("batch delete") { connection in
            let ids = try run(select, on: connection).compactMap(objectID)
            let list: [SQLServerValue] = [.integerArray(ids.compactMap(\.primaryKey))]
            _ = try connection.query("DELETE FROM \(quoted(layout.rootName)) WHERE Z_PK = ANY($1::bigint[])", list)
            for join in model.resolved.joinTables {
                if join.sourceRoot == layout.rootName { _ = try connection.query("DELETE FROM \(quoted(join.table)) WHERE src = ANY($1::bigint[])", list) }
                if join.destinationRoot == layout.rootName { _ = try connection.query("DELETE FROM \(quoted(join.table)) WHERE dst = ANY($1::bigint[])", list) }
            }
            var entry = LedgerEntry(author: author, contextName: "batch delete")
            for id in ids { entry.record(id, .delete) }
            return (ids, try writeLedger(connection, entry))
        }
    }
}
