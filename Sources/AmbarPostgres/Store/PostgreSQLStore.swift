import AmbarCore
import AmbarSQL
import Foundation
import Logging

/// The PostgreSQL backend: the same store as ``SQLiteStore`` — tables, row versions, merge
/// policies, ledger — in a database on a server that several hosts share.
///
/// Every method runs synchronously on the caller's thread over a pooled connection
/// (``ServerConnectionPool``); each write runs in one transaction (READ COMMITTED: optimistic
/// locking is by row version, as on SQLite). Ledger tokens are handed out by one row
/// (`ambar_ledger_head`) updated last in the saving transaction: its lock is held until commit,
/// so tokens become visible in commit order and a follower never skips a committed transaction.
final class PostgreSQLStore: PersistentStore {
    let identifier: String
    let model: ManagedObjectModel
    let location: String
    let pool: ServerConnectionPool
    let entityIDs: [String: Int64]
    let entityNames: [Int64: String]
    /// The interned scope of each entity's object IDs in this store.
    let scopes: StoreScopes
    /// The scope of each entity's IDs by the entity's number.
    let entityScopes: [Int64: Unmanaged<ObjectIDScope>]
    let rowSpecs: [String: RowSpec]
    /// Primary keys taken from the sequences ahead of the saves that use them.
    let keyReserve = PrimaryKeyReserve()
    /// The PostgreSQL type of each column, by root table.
    let columnTypes: [String: [String: String]]
    static let logger = Logger(label: "ambar.stack.postgres")

    /// Opens (creating or migrating if needed) the store for `model` in the connector's database.
    ///
    /// - Throws: ``AmbarError/serverUnavailable(server:operation:reason:cause:)`` when the server cannot
    ///   be reached or refuses the credentials; ``AmbarError/storeCannotOpen(path:reason:cause:)`` when the
    ///   database does not hold text as UTF-8; the model errors of ``SQLiteStore``.
    static func open(_ connector: any SQLServerConnector, model: ManagedObjectModel) throws(AmbarError) -> PostgreSQLStore {
        let pool = ServerConnectionPool(connector: connector, sessionSetup: PostgreSQLSchema.markSessionAsAmbars)
        let location = connector.displayLocation
        do {
            let prepared = try pool.withConnection("opening the store") { connection -> (uuid: String, entityIDs: [String: Int64]) in
                let encoding = try connection.query("SHOW server_encoding", []).rows.first.flatMap { PostgreSQLValues.text($0[0]) }
                guard encoding == "UTF8" else {
                    throw AmbarError.storeCannotOpen(
                        path: location, reason: "the database's encoding is \(encoding ?? "unknown"), not UTF8: create it with ENCODING 'UTF8'")
                }
                if let current = try PostgreSQLSchema.alreadyPrepared(connection, model: model) { return current }
                return try transaction(connection) { try PostgreSQLSchema.prepare(connection, model: model, location: location) }
            }
            return try PostgreSQLStore(pool: pool, model: model, uuid: prepared.uuid, entityIDs: prepared.entityIDs)
        } catch {
            pool.close()
            throw error
        }
    }

    /// Reads the model kept in the store's metadata.
    static func storedModel(_ connector: any SQLServerConnector) throws(AmbarError) -> ManagedObjectModel {
        let pool = ServerConnectionPool(connector: connector, sessionSetup: PostgreSQLSchema.markSessionAsAmbars)
        defer { pool.close() }
        let json: String? = try pool.withConnection("reading the store's model") { connection in
            let exists = try connection.query("SELECT to_regclass('ambar_metadata') IS NOT NULL", []).rows.first?.first
            guard exists == .boolean(true) else { return nil }
            return try PostgreSQLSchema.metadata(connection)["model"]
        }
        guard let json else {
            throw .storeCannotOpen(
                path: connector.displayLocation,
                reason: "the database has no Ambar store (no model in ambar_metadata); create one with `sync-agent init --store URL --model FILE`")
        }
        do {
            return try JSONDecoder().decode(ManagedObjectModel.self, from: Data(json.utf8))
        } catch {
            throw .storeCannotOpen(path: connector.displayLocation, reason: "the model in ambar_metadata cannot be read: \(error)", cause: ErrorCause(error))
        }
    }

    private init(pool: ServerConnectionPool, model: ManagedObjectModel, uuid: String, entityIDs: [String: Int64]) throws(AmbarError) {
        self.pool = pool
        self.location = pool.location
        self.model = model
        self.identifier = uuid
        self.entityIDs = entityIDs
        var names: [Int64: String] = [:]
        for (name, id) in entityIDs { names[id] = name }
        self.entityNames = names
        let scopes = StoreScopes(storeIdentifier: uuid, entityNames: entityIDs.keys)
        self.scopes = scopes
        self.entityScopes = entityIDs.reduce(into: [:]) { $0[$1.value] = scopes.scope($1.key) }
        self.rowSpecs = try RowSpec.specs(for: model.resolved, entityIDs: entityIDs, scopes: scopes, location: pool.location)
        self.columnTypes = PostgreSQLSchema.columnTypes(model.resolved)
    }

    /// Runs `body` between BEGIN and COMMIT on `connection`; rolls back when it throws.
    static func transaction<T>(_ connection: any SQLServerConnection, _ begin: String = "BEGIN", _ body: () throws -> T) throws -> T {
        _ = try connection.query(begin, [])
        do {
            let result = try body()
            _ = try connection.query("COMMIT", [])
            return result
        } catch {
            if connection.isUsable {
                do { _ = try connection.query("ROLLBACK", []) } catch {
                    logger.error("rolling back a failed transaction failed too", metadata: ["error": "\(error)"])
                }
            }
            throw error
        }
    }

    /// Runs `body` in one READ COMMITTED write transaction: the level its compare-and-sets (a
    /// row's version, a consumer's position) are written for, whatever the server's default. A
    /// deadlock between two saves (SQLSTATE 40P01) or a serialization failure (40001, which a
    /// server can still raise at this level in rare cases, and a pooler that drops the level
    /// would raise often) rolls back one of them; it is run again, up to five times.
    func write<T>(_ operation: String, _ body: (any SQLServerConnection) throws -> T) throws(AmbarError) -> T {
        try pool.withConnection(operation) { connection in
            var attempt = 1
            while true {
                do {
                    return try Self.transaction(connection, "BEGIN ISOLATION LEVEL READ COMMITTED") { try body(connection) }
                } catch {
                    guard attempt < 5, let state = (error as? SQLServerError)?.sqlState, Self.retriedStates.contains(state) else { throw error }
                    Self.logger.notice(
                        "\(state == "40P01" ? "a deadlock" : "a serialization failure") rolled back \(operation); running it again",
                        metadata: ["attempt": "\(attempt)", "sqlstate": "\(state)"])
                    attempt += 1
                }
            }
        }
    }

    /// The SQLSTATEs after which a write transaction is run again: deadlock_detected and
    /// serialization_failure.
    static let retriedStates: Set<String> = ["40P01", "40001"]

    /// Runs one statement (its own snapshot), prepared on its connection from its second call
    /// (``oneStatement(_:_:_:)``).
    func read(_ operation: String, _ sql: String, _ parameters: [SQLServerValue]) throws(AmbarError) -> [[SQLServerValue]] {
        try pool.withConnection(operation) { connection in try Self.oneStatement(connection, sql, parameters) }
    }

    /// Runs one statement on its own (outside any transaction) as a recurring statement: parsed
    /// and planned once per connection and shape (``PreparedShapes``), later calls sending only
    /// the values. A fetch, a fault firing and a count each send one of a few shapes per entity.
    ///
    /// When another process changed the schema under a prepared statement so that its result
    /// would change (SQLSTATE 0A000, "cached plan must not change result type"), the server
    /// refuses it before running anything, and the shape is forgotten: it runs once more, parsed
    /// anew, so the caller never sees a migration it did not make.
    static func oneStatement(_ connection: any SQLServerConnection, _ sql: String, _ parameters: [SQLServerValue]) throws -> [[SQLServerValue]] {
        do {
            return try connection.queryRecurring(sql, parameters)
        } catch let error where error.sqlState == "0A000" {
            return try connection.queryRecurring(sql, parameters)
        }
    }

    func close() {
        pool.close()
    }

    func checkpoint(_ mode: CheckpointMode) throws(AmbarError) {
        // The server manages its write-ahead log.
    }

    func integrityCheck() throws(AmbarError) -> [String] {
        // The server keeps pages sound; what can drift is the store's own bookkeeping.
        try pool.withConnection("integrity check") { connection in
            var problems: [String] = []
            let tables = Set(
                try connection.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()", []).rows.compactMap { PostgreSQLValues.text($0[0]) }
            )
            for table in PostgreSQLSchema.ambarTables + model.resolved.roots + model.resolved.joinTables.map(\.table) where !tables.contains(table) {
                problems.append("table \(table) is missing")
            }
            guard problems.isEmpty else { return problems }
            let head = try connection.query("SELECT token FROM ambar_ledger_head", []).rows.first.flatMap { PostgreSQLValues.integer($0[0]) } ?? 0
            let last =
                try connection.query("SELECT COALESCE(max(token), 0) FROM ambar_transactions", []).rows.first.flatMap { PostgreSQLValues.integer($0[0]) } ?? 0
            if last > head { problems.append("ledger transaction \(last) is past the ledger head \(head)") }
            for root in model.resolved.roots {
                let unknown = try connection.query(
                    "SELECT count(*) FROM \(quoted(root)) WHERE NOT (Z_ENT = ANY($1::bigint[]))",
                    [.integerArray((model.resolved.entities[root]?.selfAndDescendants ?? []).compactMap { entityIDs[$0] })])
                if let n = unknown.rows.first.flatMap({ PostgreSQLValues.integer($0[0]) }), n > 0 {
                    problems.append("\(n) rows of \(root) have an entity number the model does not have")
                }
            }
            return problems
        }
    }

    func serverStatus() throws(AmbarError) -> StoreServerStatus? {
        try pool.withConnection("read the server's state") { connection in
            let version = try connection.query("SHOW server_version", []).rows.first.flatMap { PostgreSQLValues.text($0[0]) } ?? "?"
            let listeners =
                try connection.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '%-listen'", []
                ).rows.first
                .flatMap { PostgreSQLValues.integer($0[0]) } ?? 0
            let usage = try connection.query("SELECT pg_notification_queue_usage()", []).rows.first.flatMap { PostgreSQLValues.real($0[0]) } ?? 0
            return StoreServerStatus(backend: "postgresql", location: location, version: version, listeners: Int(listeners), notificationQueueUsage: usage)
        }
    }

    /// A `pg_dump` of the database (custom format; restore it with `pg_restore`): one
    /// consistent snapshot while others write.
    func backup(to url: URL) throws(AmbarError) {
        try pool.connector.dump(to: url)
    }

    // MARK: - Reading

    func spec(for layout: EntityLayout) throws(AmbarError) -> RowSpec {
        guard let spec = rowSpecs[layout.rootName] else { throw .unknownEntity(layout.name) }
        return spec
    }

    /// A row selected with ``RowSpec/selectList(_:)``.
    func readRow(_ cells: [SQLServerValue], _ spec: RowSpec) -> StoreRow? {
        guard cells.count >= 3, let pk = PostgreSQLValues.integer(cells[0]), let ent = PostgreSQLValues.integer(cells[1]),
            let map = spec.perEntity[ent]
        else { return nil }
        let version = PostgreSQLValues.integer(cells[2]) ?? 0
        var values = [AttributeValue]()
        values.reserveCapacity(map.attributePositions.count)
        for (i, position) in map.attributePositions.enumerated() {
            values.append(position < 0 ? map.attributeDefaults[i] : PostgreSQLValues.attributeValue(cells[Int(position)], map.attributeTypes[i]))
        }
        var toOne: [ManagedObjectID?] = []
        if !map.toOne.isEmpty {
            toOne = Array(repeating: nil, count: map.layout.relationships.count)
            for (index, position, entityPosition, destination) in map.toOne {
                guard position >= 0, let key = PostgreSQLValues.integer(cells[Int(position)]) else { continue }
                var scope = destination
                if let entityPosition, let number = PostgreSQLValues.integer(cells[Int(entityPosition)]), let found = entityScopes[number] {
                    scope = found
                }
                toOne[index] = ManagedObjectID(scope: scope, primaryKey: key)
            }
        }
        return StoreRow(
            id: ManagedObjectID(scope: map.scope, primaryKey: pk), version: version, values: RowValues(values), toOne: toOne)
    }

    func objectID(_ cells: [SQLServerValue]) -> ManagedObjectID? {
        guard let pk = PostgreSQLValues.integer(cells[0]), let ent = PostgreSQLValues.integer(cells[1]), let scope = entityScopes[ent] else { return nil }
        return ManagedObjectID(scope: scope, primaryKey: pk)
    }

    /// A compiled query: SQL, parameters (some decided by the client), and the row spec.
    struct CompiledQuery {
        let sql: String
        let arguments: [BoundValue]
        let spec: RowSpec
    }

    /// Builds `SELECT <what> FROM <root> … WHERE … ORDER BY … LIMIT …` for a query.
    func select(_ what: (String) -> String, _ query: StoreQuery, ordered: Bool = true) throws(AmbarError) -> CompiledQuery {
        var builder = SQLQueryBuilder(model: model.resolved, entityIDs: entityIDs, dialect: .postgres)
        var (sql, layout) = try builder.select(what, query, ordered: ordered)
        let spec = try spec(for: layout)
        if query.limit != nil || query.offset > 0 {
            let limit = query.limit.map { builder.placeholder(.scalar(.integer(Int64($0)))) } ?? "ALL"
            sql += " LIMIT \(limit) OFFSET \(builder.placeholder(.scalar(.integer(Int64(query.offset)))))"
        }
        return CompiledQuery(sql: sql, arguments: builder.arguments, spec: spec)
    }

    /// Runs a compiled query. When the client decides part of it (text with options, text
    /// operators), the columns' distinct values are read in the same REPEATABLE READ snapshot as
    /// the query itself, so the answer is exact for one moment.
    func run(_ operation: String, _ query: CompiledQuery) throws(AmbarError) -> [[SQLServerValue]] {
        let decidedByClient = query.arguments.contains {
            switch $0 {
            case .clientSet, .clientRanks: return true
            default: return false
            }
        }
        return try pool.withConnection(operation) { connection in
            guard decidedByClient else { return try Self.oneStatement(connection, query.sql, try resolve(query.arguments, connection)) }
            return try Self.transaction(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { try run(query, on: connection) }
        }
    }

    /// Runs a compiled query on `connection`, inside the caller's transaction, as a recurring
    /// statement (prepared from its second call on the connection).
    func run(_ query: CompiledQuery, on connection: any SQLServerConnection) throws -> [[SQLServerValue]] {
        try connection.queryRecurring(query.sql, try resolve(query.arguments, connection))
    }

    /// The parameters of a compiled query, the client's decisions made over distinct values.
    private func resolve(_ arguments: [BoundValue], _ connection: any SQLServerConnection) throws -> [SQLServerValue] {
        var distinct: [String: [String]] = [:]
        func values(_ table: String, _ column: String) throws -> [String] {
            let key = "\(table)\u{0}\(column)"
            if let known = distinct[key] { return known }
            let rows = try connection.query("SELECT DISTINCT \(quoted(column))::text FROM \(quoted(table)) WHERE \(quoted(column)) IS NOT NULL", []).rows
            let result = rows.compactMap { PostgreSQLValues.text($0[0]) }
            distinct[key] = result
            return result
        }
        var result: [SQLServerValue] = []
        result.reserveCapacity(arguments.count)
        var pendingRanks: [Int64] = []
        for argument in arguments {
            switch argument {
            case .scalar(let scalar): result.append(PostgreSQLValues.serverValue(scalar))
            case .decimal(let text): result.append(.numeric(text))
            case .integers(let keys): result.append(.integerArray(keys))
            case .clientSet(let test): result.append(.textArray(try values(test.table, test.column).filter { try test.test($0) }))
            case .clientRanks(let ranking):
                let folded = try values(ranking.table, ranking.column).map { ($0, TextSemantics.fold($0, ranking.options)) }
                    .sorted { TextSemantics.compareBytes($0.1, $1.1) < 0 }
                var ranks: [Int64] = []
                var rank: Int64 = 0
                for (i, pair) in folded.enumerated() {
                    if i > 0 && pair.1 != folded[i - 1].1 { rank += 1 }
                    ranks.append(rank)
                }
                result.append(.textArray(folded.map(\.0)))
                pendingRanks = ranks
            case .clientRanksSecondHalf: result.append(.integerArray(pendingRanks))
            }
        }
        return result
    }

    func fetchRows(_ query: StoreQuery) throws(AmbarError) -> [StoreRow] {
        let rowSpec = try spec(for: try model.resolved.layout(query.entity))
        let compiled = try select({ rowSpec.selectList($0) }, query)
        return try run("fetch", compiled).compactMap { readRow($0, compiled.spec) }
    }

    func fetchIDsAtHistoryHead(_ queries: [StoreQuery]) throws(AmbarError) -> (ids: [[ManagedObjectID]], token: Int64) {
        let compiled = try queries.map { query throws(AmbarError) in try select({ "\($0).Z_PK, \($0).Z_ENT" }, query) }
        // One REPEATABLE READ snapshot (taken at its first statement) for the IDs and the head
        // row, which every committing transaction updates.
        return try pool.withConnection("fetch IDs at the ledger head") { connection in
            try Self.transaction(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                let head = try connection.query("SELECT token FROM ambar_ledger_head WHERE id = 1", []).rows.first.flatMap { PostgreSQLValues.integer($0[0]) }
                let ids = try compiled.map { query in try run(query, on: connection).compactMap(objectID) }
                return (ids, head ?? 0)
            }
        }
    }

    func fetchIDs(_ query: StoreQuery) throws(AmbarError) -> [ManagedObjectID] {
        try run("fetch IDs", try select({ "\($0).Z_PK, \($0).Z_ENT" }, query)).compactMap(objectID)
    }

    func count(_ query: StoreQuery) throws(AmbarError) -> Int {
        var q = query
        q.sortDescriptors = []
        let inner = try select({ $0 + ".Z_PK" }, q, ordered: false)
        let rows = try run("count", CompiledQuery(sql: "SELECT COUNT(*) FROM (\(inner.sql)) AS q", arguments: inner.arguments, spec: inner.spec))
        return Int(rows.first.flatMap { PostgreSQLValues.integer($0[0]) } ?? 0)
    }

    func fetchValues(_ query: StoreQuery, properties: [String], distinct: Bool) throws(AmbarError) -> [[String: AttributeValue]] {
        let layout = try model.resolved.layout(query.entity)
        let (attributes, columns) = try layout.valueColumns(properties)
        let inner = try select({ alias in columns.map { "\(alias).\(quoted($0))" }.joined(separator: ", ") }, query)
        var compiled = inner
        if distinct {
            // Each distinct combination once, where it first appears in the query's order.
            let list = columns.map(quoted).joined(separator: ", ")
            compiled = CompiledQuery(
                sql:
                    "SELECT \(list) FROM (SELECT \(list), row_number() OVER () AS ambar_position FROM (\(inner.sql)) AS q) AS n GROUP BY \(list) ORDER BY min(ambar_position)",
                arguments: inner.arguments, spec: inner.spec)
        }
        return try run("fetch values", compiled).map { cells in
            var dictionary: [String: AttributeValue] = [:]
            for (i, attribute) in attributes.enumerated() { dictionary[attribute.name] = PostgreSQLValues.attributeValue(cells[i], attribute.type) }
            return dictionary
        }
    }

    func loadRows(_ ids: [ManagedObjectID]) throws(AmbarError) -> [StoreRow] {
        var byRoot: [String: [Int64]] = [:]
        for id in ids {
            guard let pk = id.primaryKey, let layout = model.resolved.entities[id.entityName] else { continue }
            byRoot[layout.rootName, default: []].append(pk)
        }
        if byRoot.isEmpty { return [] }
        return try pool.withConnection("load rows") { connection in
            // One table is read by one statement on its own; several, in one snapshot.
            let alone = byRoot.count == 1
            let body = {
                var rows: [StoreRow] = []
                for (root, pks) in byRoot {
                    guard let spec = self.rowSpecs[root] else { continue }
                    let sql = "SELECT \(spec.selectListT0) FROM \(quoted(root)) AS t0 WHERE t0.Z_PK = ANY($1::bigint[])"
                    let cells = alone ? try Self.oneStatement(connection, sql, [.integerArray(pks)]) : try connection.queryRecurring(sql, [.integerArray(pks)])
                    rows += cells.compactMap { self.readRow($0, spec) }
                }
                return rows
            }
            return alone ? try body() : try Self.transaction(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
        }
    }

    func loadToMany(_ owner: ManagedObjectID, _ relationship: ResolvedRelationship) throws(AmbarError) -> [ManagedObjectID] {
        guard let pk = owner.primaryKey else { return [] }
        let destination = try model.resolved.layout(relationship.description.destination)
        guard let sql = RelationshipSQL.destinations(of: relationship, destinationRoot: destination.rootName, placeholder: "$1") else { return [] }
        return try read("load relationship", sql, [.integer(pk)]).compactMap(objectID)
    }

    func allocatePrimaryKeys(entity: String, count: Int) throws(AmbarError) -> [Int64] {
        let layout = try model.resolved.layout(entity)
        guard count > 0 else { return [] }
        return try read(
            "allocate primary keys", "SELECT nextval('\(PostgreSQLSchema.sequence(of: layout.rootName))') FROM generate_series(1, $1)", [.integer(Int64(count))]
        )
        .compactMap { PostgreSQLValues.integer($0[0]) }
    }
}
