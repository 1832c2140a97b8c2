import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite
import Logging

// Reading: row decoding, the SELECTs of every fetch, by-ID loads and to-many reads.

extension SQLiteStore {
    // MARK: - Reading

    func spec(for layout: EntityLayout) throws(AmbarError) -> RowSpec {
        guard let spec = rowSpecs[layout.rootName] else { throw .unknownEntity(layout.name) }
        return spec
    }

    /// Reads the current row of `statement` (selected with ``RowSpec/selectList(_:)``), looking
    /// its entity up only when it differs from the last row's (`last`, kept by the caller across
    /// the rows of one statement): the rows of a fetch mostly share one entity.
    func readRow(_ statement: SQLiteStatement, _ spec: RowSpec, last: inout RowSpec.LastEntity) -> StoreRow? {
        var block = RowValueBlock(capacity: 0)
        guard let header = readRow(statement, spec, last: &last, into: &block) else { return nil }
        return StoreRow(id: header.id, version: header.version, values: block.row(0), toOne: header.toOne)
    }

    /// Reads every row `statement` steps to (`step` returns whether there is one), and hands each
    /// to `body` in order. The rows' values are read block by block into one buffer
    /// (``RowValueBlock``): a fetch makes one allocation per block of about a hundred rows, not
    /// one per row, and `body` gets a block's rows just after they were read.
    func readRows(
        _ statement: SQLiteStatement, _ spec: RowSpec, step: () throws -> Bool, _ body: (consuming StoreRow) -> Void
    ) rethrows {
        var block = RowValueBlock()
        var headers: [RowHeader] = []
        var last: RowSpec.LastEntity = nil
        func flush() {
            for (k, header) in headers.enumerated() {
                body(StoreRow(id: header.id, version: header.version, values: block.row(k), toOne: header.toOne))
            }
            headers.removeAll(keepingCapacity: true)
            block.removeAll()
        }
        while try step() {
            if !block.hasRoom(for: spec.widestRow) { flush() }
            if let header = readRow(statement, spec, last: &last, into: &block) { headers.append(header) }
        }
        flush()
    }

    /// A row's ID, version and to-one destinations, whose values a ``RowValueBlock`` holds.
    struct RowHeader {
        let id: ManagedObjectID
        let version: Int64
        let toOne: [ManagedObjectID?]
    }

    /// Reads the current row of `statement`, appending its values to `block` as its next row.
    @inline(__always)
    private func readRow(_ statement: SQLiteStatement, _ spec: RowSpec, last: inout RowSpec.LastEntity, into block: inout RowValueBlock) -> RowHeader? {
        let ent = sqlite3_column_int64(statement, 1)
        let map: Unmanaged<RowSpec.EntityMap>
        if let known = last, known._withUnsafeGuaranteedRef({ $0.entityID == ent }) {
            map = known
        } else {
            guard let found = spec.perEntity[ent] else { return nil }
            map = Unmanaged.passUnretained(found)
            last = map
        }
        // `spec`, which holds every map, outlives the call: the map is used without a reference.
        return map._withUnsafeGuaranteedRef { map in readRow(statement, map, into: &block) }
    }

    /// Reads the current row of `statement`, of the entity `map` describes.
    @inline(__always)
    private func readRow(_ statement: SQLiteStatement, _ map: RowSpec.EntityMap, into block: inout RowValueBlock) -> RowHeader {
        let pk = sqlite3_column_int64(statement, 0)
        let version = sqlite3_column_int64(statement, 2)
        block.beginRow(width: map.attributePositions.count)
        for (i, position) in map.attributePositions.enumerated() {
            block.append(position < 0 ? map.attributeDefaults[i] : SQLiteValues.read(statement, position, map.attributeTypes[i]))
        }
        block.endRow()
        var toOne: [ManagedObjectID?] = []
        if !map.toOne.isEmpty {
            toOne = Array(repeating: nil, count: map.layout.relationships.count)
            for (index, position, entityPosition, destination) in map.toOne where sqlite3_column_type(statement, position) != SQLITE_NULL {
                var scope = destination
                if let entityPosition, sqlite3_column_type(statement, entityPosition) != SQLITE_NULL,
                    let found = entityScopes[sqlite3_column_int64(statement, entityPosition)]
                {
                    scope = found
                }
                toOne[index] = ManagedObjectID(scope: scope, primaryKey: sqlite3_column_int64(statement, position))
            }
        }
        return RowHeader(id: ManagedObjectID(scope: map.scope, primaryKey: pk), version: version, toOne: toOne)
    }

    /// Builds `SELECT <what> FROM <root> … WHERE … ORDER BY … LIMIT …` for a query.
    func select(_ what: (String) -> String, _ query: StoreQuery, ordered: Bool = true) throws(AmbarError) -> (
        sql: String, arguments: [DatabaseValue], spec: RowSpec
    ) {
        var builder = SQLQueryBuilder(model: model.resolved, entityIDs: entityIDs)
        var (sql, layout) = try builder.select(what, query, ordered: ordered)
        let spec = try spec(for: layout)
        var arguments = builder.arguments.map(SQLiteValues.databaseValue)
        if query.limit != nil || query.offset > 0 {
            sql += " LIMIT ? OFFSET ?"
            arguments += [Int64(query.limit ?? -1).databaseValue, Int64(query.offset).databaseValue]
        }
        return (sql, arguments, spec)
    }

    /// Runs `body`, which may run several statements, in one read transaction: all of them see
    /// the same committed state.
    func read<T>(_ operation: String, _ body: (Database) throws -> T) throws(AmbarError) -> T {
        do {
            return try writer.read { db in try body(db) }
        } catch {
            throw SQLiteValues.wrap(error, operation)
        }
    }

    /// Runs `body`, which runs exactly one statement, without an explicit transaction: SQLite
    /// gives a lone statement its own read transaction, so it still sees one committed state.
    /// Skipping BEGIN/COMMIT roughly halves the cost of a small read (a fault firing, a merge's
    /// re-read, the ledger head).
    func readOneStatement<T>(_ operation: String, _ body: (Database) throws -> T) throws(AmbarError) -> T {
        do {
            return try writer.unsafeRead { db in try body(db) }
        } catch {
            throw SQLiteValues.wrap(error, operation)
        }
    }

    package func fetchRows(_ query: StoreQuery) throws(AmbarError) -> [StoreRow] {
        var rows: [StoreRow] = []
        try forEachRow(query) { rows.append($0) }
        return rows
    }

    package func forEachRow(_ query: StoreQuery, _ body: (consuming StoreRow) -> Void) throws(AmbarError) {
        let rowSpec = try spec(for: try model.resolved.layout(query.entity))
        let (sql, arguments, spec) = try select({ rowSpec.selectList($0) }, query)
        try readOneStatement("fetch") { db in
            let statement = try db.cachedStatement(sql: sql)
            statement.setUncheckedArguments(StatementArguments(arguments))
            let cursor = try Row.fetchCursor(statement)
            try readRows(statement.sqliteStatement, spec, step: { try cursor.next() != nil }, body)
        }
    }

    package func fetchIDsAtHistoryHead(_ queries: [StoreQuery]) throws(AmbarError) -> (ids: [[ManagedObjectID]], token: Int64) {
        var statements: [(sql: String, arguments: [DatabaseValue])] = []
        for query in queries {
            let (sql, arguments, _) = try select({ "\($0).Z_PK, \($0).Z_ENT" }, query)
            statements.append((sql, arguments))
        }
        return try read("fetch IDs at the ledger head") { db in
            let ids = try statements.map { try readIDs(db, $0.sql, StatementArguments($0.arguments)) }
            return (ids, try SQLiteSchema.ledgerHead(db))
        }
    }

    package func fetchIDs(_ query: StoreQuery) throws(AmbarError) -> [ManagedObjectID] {
        let (sql, arguments, _) = try select({ "\($0).Z_PK, \($0).Z_ENT" }, query)
        return try readOneStatement("fetch IDs") { db in try readIDs(db, sql, StatementArguments(arguments)) }
    }

    package func count(_ query: StoreQuery) throws(AmbarError) -> Int {
        var q = query
        q.sortDescriptors = []
        let (sql, arguments, _) = try select({ $0 + ".Z_PK" }, q, ordered: false)
        return try readOneStatement("count") { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM (\(sql))", arguments: StatementArguments(arguments)) ?? 0
        }
    }

    package func fetchValues(_ query: StoreQuery, properties: [String], distinct: Bool) throws(AmbarError) -> [[String: AttributeValue]] {
        let layout = try model.resolved.layout(query.entity)
        let (attributes, columns) = try layout.valueColumns(properties)
        let (inner, arguments, _) = try select({ alias in columns.map { "\(alias).\(quoted($0))" }.joined(separator: ", ") }, query)
        let sql =
            distinct
            ? "SELECT DISTINCT \(columns.map(quoted).joined(separator: ", ")) FROM (\(inner))"
            : inner
        return try readOneStatement("fetch values") { db in
            let statement = try db.cachedStatement(sql: sql)
            statement.setUncheckedArguments(StatementArguments(arguments))
            var result: [[String: AttributeValue]] = []
            let cursor = try Row.fetchCursor(statement)
            while try cursor.next() != nil {
                var dictionary: [String: AttributeValue] = [:]
                for (i, attribute) in attributes.enumerated() {
                    dictionary[attribute.name] = SQLiteValues.read(statement.sqliteStatement, Int32(i), attribute.type)
                }
                result.append(dictionary)
            }
            return result
        }
    }

    package func loadRows(_ ids: [ManagedObjectID]) throws(AmbarError) -> [StoreRow] {
        let oneStatement = ids.count <= 500 && Set(ids.lazy.compactMap { self.model.resolved.entities[$0.entityName]?.rootName }).count == 1
        return oneStatement ? try readOneStatement("load rows") { db in try rows(db, ids) } : try read("load rows") { db in try rows(db, ids) }
    }

    /// The stored rows of `ids` (those that still exist), read in the current transaction: one
    /// statement per root table and 500 keys.
    func rows(_ db: Database, _ ids: [ManagedObjectID]) throws -> [StoreRow] {
        var byRoot: [String: [Int64]] = [:]
        for id in ids {
            guard let pk = id.primaryKey, let layout = model.resolved.entities[id.entityName] else { continue }
            byRoot[layout.rootName, default: []].append(pk)
        }
        var rows: [StoreRow] = []
        for (root, pks) in byRoot {
            guard let spec = rowSpecs[root] else { continue }
            for start in stride(from: 0, to: pks.count, by: 500) {
                let chunk = StatementShape.padded(Array(pks[start..<min(start + 500, pks.count)]))
                let sql =
                    "SELECT \(spec.selectList("t0")) FROM \(quoted(root)) AS t0 WHERE t0.Z_PK IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ",")))"
                let statement = try db.cachedStatement(sql: sql)
                let sqlite = statement.sqliteStatement
                sqlite3_reset(sqlite)
                for (i, pk) in chunk.enumerated() { sqlite3_bind_int64(sqlite, Int32(i + 1), pk) }
                try readRows(
                    sqlite, spec,
                    step: {
                        let code = sqlite3_step(sqlite)
                        if code == SQLITE_DONE { return false }
                        guard code == SQLITE_ROW else {
                            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                        }
                        return true
                    }
                ) { rows.append($0) }
                sqlite3_reset(sqlite)
            }
        }
        return rows
    }

    package func loadToMany(_ owner: ManagedObjectID, _ relationship: ResolvedRelationship) throws(AmbarError) -> [ManagedObjectID] {
        guard let pk = owner.primaryKey else { return [] }
        let destination = try model.resolved.layout(relationship.description.destination)
        guard let sql = RelationshipSQL.destinations(of: relationship, destinationRoot: destination.rootName, placeholder: "?") else { return [] }
        return try readOneStatement("load relationship") { db in try readIDs(db, sql, [pk]) }
    }

    /// The object IDs a statement selects as `Z_PK, Z_ENT` (rows of an unknown entity skipped).
    private func readIDs(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> [ManagedObjectID] {
        let statement = try db.cachedStatement(sql: sql)
        statement.setUncheckedArguments(arguments)
        var ids: [ManagedObjectID] = []
        let cursor = try Row.fetchCursor(statement)
        while try cursor.next() != nil {
            let s = statement.sqliteStatement
            guard let scope = entityScopes[sqlite3_column_int64(s, 1)] else { continue }
            ids.append(ManagedObjectID(scope: scope, primaryKey: sqlite3_column_int64(s, 0)))
        }
        return ids
    }
}
