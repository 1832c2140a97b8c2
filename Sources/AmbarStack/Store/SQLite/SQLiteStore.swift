import Foundation
import GRDB
import GRDBSQLite
import Logging

/// The SQLite backend: a WAL-mode `DatabasePool` for files (one writer, concurrent readers) or a
/// `DatabaseQueue` in memory. Write transactions are IMMEDIATE with a busy timeout, so several
/// processes can share the file without surprise `SQLITE_BUSY` errors.
final class SQLiteStore: PersistentStore {
    /// Where to open a store.
    enum Location: Sendable {
        case file(URL)
        case inMemory
    }

    let identifier: String
    let model: ManagedObjectModel
    let location: String
    let writer: any DatabaseWriter
    let entityIDs: [String: Int64]
    let entityNames: [Int64: String]
    /// How to read a row of each root table.
    let rowSpecs: [String: RowSpec]
    static let logger = Logger(label: "ambar.stack.sqlite")

    /// The INSERT statement of one entity, built once.
    struct InsertPlan: Sendable {
        let sql: String
        let entityID: Int64
        let toOne: [ResolvedRelationship]
    }

    let insertPlans: [String: InsertPlan]

    /// Opens (creating if needed) a store for `model`.
    ///
    /// - Throws: ``AmbarError/storeCannotOpen(path:reason:)`` when the file cannot be opened or is
    ///   not an SQLite database, ``AmbarError/incompatibleModel(storeHash:modelHash:)`` when it was
    ///   created with another model.
    static func open(_ location: Location, model: ManagedObjectModel, recovery: DamagedStoreRecovery = .fail, busyTimeout: TimeInterval = 10) throws(AmbarError)
        -> SQLiteStore
    {
        do {
            return try openOnce(location, model: model, busyTimeout: busyTimeout)
        } catch {
            guard case .storeDamaged(let path, let reason) = error, recovery == .quarantine, case .file(let url) = location else { throw error }
            let moved = try quarantine(url)
            logger.error(
                "the store was damaged and was moved aside; starting an empty store",
                metadata: [
                    "store": "\(path)", "reason": "\(reason)", "moved-to": "\(moved.path)",
                ])
            return try openOnce(location, model: model, busyTimeout: busyTimeout)
        }
    }

    /// Moves a damaged store and its -wal and -shm aside; returns the new path of the main file.
    static func quarantine(_ url: URL) throws(AmbarError) -> URL {
        let stamp = Date().formatted(.iso8601.year().month().day().dateSeparator(.omitted).time(includingFractionalSeconds: false).timeSeparator(.omitted))
        let target = URL(fileURLWithPath: "\(url.path).corrupt-\(stamp)")
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            guard rename(url.path + suffix, target.path + suffix) == 0 else {
                throw .storage(
                    operation: "quarantine a damaged store", code: errno, message: "cannot move \(url.path + suffix) aside: \(String(cString: strerror(errno)))"
                )
            }
        }
        return target
    }

    /// The size the write-ahead log is cut back to after a checkpoint restarts it: 4 MiB.
    static let walSizeLimit = 4 << 20

    private static func openOnce(_ location: Location, model: ManagedObjectModel, busyTimeout: TimeInterval) throws(AmbarError) -> SQLiteStore {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "ambar"
        let isFile: Bool
        if case .file = location { isFile = true } else { isFile = false }
        configuration.prepareDatabase { db in
            SQLiteFunctions.register(on: db)
            if isFile && !db.configuration.readonly {
                // Keep -wal and -shm after close, so read-only processes can always open the store.
                var flag: CInt = 1
                let code = withUnsafeMutablePointer(to: &flag) { pointer in
                    sqlite3_file_control(db.sqliteConnection, nil, SQLITE_FCNTL_PERSIST_WAL, pointer)
                }
                guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                // A reader that holds an old snapshot (a process frozen or busy mid-read) keeps
                // checkpoints from restarting the WAL, which then grows with every write; once a
                // checkpoint restarts it, it is cut back to this size, so the files level off again.
                try db.execute(sql: "PRAGMA journal_size_limit = \(SQLiteStore.walSizeLimit)")
            }
        }
        let writer: any DatabaseWriter
        let description: String
        do {
            switch location {
            case .file(let url):
                description = url.path
                writer = try DatabasePool(path: url.path, configuration: configuration)
            case .inMemory:
                description = ":memory:"
                writer = try DatabaseQueue(configuration: configuration)
            }
        } catch {
            let path: String
            if case .file(let url) = location { path = url.path } else { path = ":memory:" }
            throw Self.openError(error, path: path)
        }
        let prepared: (uuid: String, entityIDs: [String: Int64])
        do {
            // A store already prepared for this model is opened with a read; only a new store, a
            // migration or a missing piece takes the write lock (and waits for it).
            if let current = try writer.read({ db in try SQLiteSchema.alreadyPrepared(db, model: model) }) {
                prepared = current
            } else {
                prepared = try writer.writeWithoutTransaction { db in
                    try SQLiteStore.immediateTransaction(db, path: description, operation: "opening the store") {
                        try SQLiteSchema.prepare(db, model: model)
                    }
                }
            }
        } catch let error as AmbarError {
            try? writer.close()
            throw error
        } catch {
            try? writer.close()
            throw Self.openError(error, path: description)
        }
        if isFile {
            // A damaged page would otherwise surface later, in the middle of some save.
            // A check that cannot run (I/O error, lock) is not evidence of damage: reported as a
            // failure to open, so recovery never moves a sound store aside.
            let problems: [String]
            do {
                problems = try writer.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            } catch {
                try? writer.close()
                throw Self.openError(error, path: description)
            }
            if problems != ["ok"] {
                try? writer.close()
                throw .storeDamaged(path: description, reason: "integrity check: " + problems.prefix(3).joined(separator: "; "))
            }
        }
        return try SQLiteStore(writer: writer, location: description, model: model, uuid: prepared.uuid, entityIDs: prepared.entityIDs)
    }

    /// Reads the model kept in an existing store's metadata.
    static func storedModel(at url: URL) throws(AmbarError) -> ManagedObjectModel {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw .storeCannotOpen(path: url.path, reason: "no such file")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        do {
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            guard
                let json = try queue.read({ db in
                    try String.fetchOne(db, sql: "SELECT value FROM ambar_metadata WHERE key = 'model'")
                })
            else {
                throw AmbarError.storeCannotOpen(path: url.path, reason: "it has no model in ambar_metadata (not an Ambar store?)")
            }
            return try JSONDecoder().decode(ManagedObjectModel.self, from: Data(json.utf8))
        } catch let error as AmbarError {
            throw error
        } catch {
            throw .storeCannotOpen(path: url.path, reason: Self.reason(error))
        }
    }

    /// A damaged file (not a database, or corrupt) as ``AmbarError/storeDamaged(path:reason:)``; a
    /// file on a read-only file system as ``AmbarError/storeReadOnly(path:reason:)``; anything
    /// else as ``AmbarError/storeCannotOpen(path:reason:)``.
    private static func openError(_ error: any Error, path: String) -> AmbarError {
        if let db = error as? DatabaseError, db.resultCode == .SQLITE_NOTADB || db.resultCode == .SQLITE_CORRUPT {
            return .storeDamaged(path: path, reason: reason(error))
        }
        if access(path, W_OK) != 0 && errno == EROFS {
            return .storeReadOnly(path: path, reason: "its file system is mounted read-only (\(reason(error)))")
        }
        return .storeCannotOpen(path: path, reason: reason(error))
    }

    private static func reason(_ error: any Error) -> String {
        if let db = error as? DatabaseError {
            if db.resultCode == .SQLITE_NOTADB { return "the file is not an SQLite database (it may be damaged)" }
            return db.message ?? "\(db)"
        }
        return "\(error)"
    }

    private init(writer: any DatabaseWriter, location: String, model: ManagedObjectModel, uuid: String, entityIDs: [String: Int64]) throws(AmbarError) {
        self.writer = writer
        self.location = location
        self.model = model
        self.identifier = uuid
        self.entityIDs = entityIDs
        var names: [Int64: String] = [:]
        for (name, id) in entityIDs { names[id] = name }
        self.entityNames = names
        let resolved = model.resolved
        self.rowSpecs = try RowSpec.specs(for: resolved, entityIDs: entityIDs, location: location)
        var plans: [String: InsertPlan] = [:]
        for (name, layout) in resolved.entities {
            guard let entityID = entityIDs[name] else { continue }
            let toOne = layout.relationships.filter { !$0.isToMany && layout.relationshipColumns[$0.index] != nil }
            var columns = ["Z_PK", "Z_ENT", "Z_OPT"] + layout.storedAttributes.map { quoted(layout.attributeColumns[$0] ?? "") }
            for rel in toOne {
                columns.append(quoted(layout.column(ofRelationship: rel.index)))
                if let column = rel.entityColumn { columns.append(quoted(column)) }
            }
            let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            plans[name] = InsertPlan(
                sql: "INSERT INTO \(quoted(layout.rootName)) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))",
                entityID: entityID, toOne: toOne)
        }
        self.insertPlans = plans
    }

    func close() {
        do {
            if let pool = writer as? DatabasePool { try pool.close() }
            if let queue = writer as? DatabaseQueue { try queue.close() }
        } catch {
            Self.logger.warning("Closing the store at \(location) failed: \(error)")
        }
    }

    func checkpoint(_ mode: CheckpointMode) throws(AmbarError) {
        do {
            try writer.writeWithoutTransaction { db in
                _ = try db.checkpoint(mode == .passive ? .passive : .truncate)
            }
        } catch {
            throw SQLiteValues.wrap(error, "checkpoint")
        }
    }

    func backup(to url: URL) throws(AmbarError) {
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let destination = try DatabaseQueue(path: url.path)
            // All pages in one step: one read snapshot, so concurrent writers cannot make the copy
            // inconsistent (they carry on; the copy is as of the moment the step began).
            try writer.backup(to: destination)
            let problems = try destination.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            try destination.close()
            guard problems == ["ok"] else {
                throw AmbarError.storage(
                    operation: "backup", code: SQLITE_CORRUPT, message: "the copy failed its integrity check: \(problems.prefix(3).joined(separator: "; "))")
            }
            chmod(url.path, 0o660)
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
            if let ambar = error as? AmbarError { throw ambar }
            throw SQLiteValues.wrap(error, "backup")
        }
    }

    func integrityCheck() throws(AmbarError) -> [String] {
        let lines = try read("integrity check") { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        return lines == ["ok"] ? [] : lines
    }

    // MARK: - Reading

    func spec(for layout: EntityLayout) throws(AmbarError) -> RowSpec {
        guard let spec = rowSpecs[layout.rootName] else { throw .unknownEntity(layout.name) }
        return spec
    }

    /// Reads the current row of `statement` (selected with ``RowSpec/selectList(_:)``).
    @inline(__always)
    func readRow(_ statement: SQLiteStatement, _ spec: RowSpec) -> StoreRow? {
        let pk = sqlite3_column_int64(statement, 0)
        let ent = sqlite3_column_int64(statement, 1)
        guard let map = spec.perEntity[ent] else { return nil }
        let version = sqlite3_column_int64(statement, 2)
        var values = [AttributeValue]()
        values.reserveCapacity(map.attributePositions.count)
        for (i, position) in map.attributePositions.enumerated() {
            values.append(position < 0 ? map.attributeDefaults[i] : SQLiteValues.read(statement, position, map.attributeTypes[i]))
        }
        var toOne: [ManagedObjectID?] = []
        if !map.toOne.isEmpty {
            toOne = Array(repeating: nil, count: map.layout.relationships.count)
            for (index, position, entityPosition, destination) in map.toOne where sqlite3_column_type(statement, position) != SQLITE_NULL {
                var entity = destination
                if let entityPosition, sqlite3_column_type(statement, entityPosition) != SQLITE_NULL,
                    let name = entityNames[sqlite3_column_int64(statement, entityPosition)]
                {
                    entity = name
                }
                toOne[index] = ManagedObjectID(entityName: entity, storeIdentifier: identifier, primaryKey: sqlite3_column_int64(statement, position))
            }
        }
        return StoreRow(
            id: ManagedObjectID(entityName: map.layout.name, storeIdentifier: identifier, primaryKey: pk),
            version: version, values: values, toOne: toOne)
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

    func fetchRows(_ query: StoreQuery) throws(AmbarError) -> [StoreRow] {
        let rowSpec = try spec(for: try model.resolved.layout(query.entity))
        let (sql, arguments, spec) = try select({ rowSpec.selectList($0) }, query)
        return try readOneStatement("fetch") { db in
            let statement = try db.cachedStatement(sql: sql)
            statement.setUncheckedArguments(StatementArguments(arguments))
            var rows: [StoreRow] = []
            let cursor = try Row.fetchCursor(statement)
            while try cursor.next() != nil {
                if let row = readRow(statement.sqliteStatement, spec) { rows.append(row) }
            }
            return rows
        }
    }

    func fetchIDs(_ query: StoreQuery) throws(AmbarError) -> [ManagedObjectID] {
        let (sql, arguments, _) = try select({ "\($0).Z_PK, \($0).Z_ENT" }, query)
        return try readOneStatement("fetch IDs") { db in
            let statement = try db.cachedStatement(sql: sql)
            statement.setUncheckedArguments(StatementArguments(arguments))
            var ids: [ManagedObjectID] = []
            let cursor = try Row.fetchCursor(statement)
            while try cursor.next() != nil {
                let s = statement.sqliteStatement
                guard let name = entityNames[sqlite3_column_int64(s, 1)] else { continue }
                ids.append(ManagedObjectID(entityName: name, storeIdentifier: identifier, primaryKey: sqlite3_column_int64(s, 0)))
            }
            return ids
        }
    }

    func count(_ query: StoreQuery) throws(AmbarError) -> Int {
        var q = query
        q.sortDescriptors = []
        let (sql, arguments, _) = try select({ $0 + ".Z_PK" }, q, ordered: false)
        return try readOneStatement("count") { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM (\(sql))", arguments: StatementArguments(arguments)) ?? 0
        }
    }

    func fetchValues(_ query: StoreQuery, properties: [String], distinct: Bool) throws(AmbarError) -> [[String: AttributeValue]] {
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

    func loadRows(_ ids: [ManagedObjectID]) throws(AmbarError) -> [StoreRow] {
        var byRoot: [String: [Int64]] = [:]
        for id in ids {
            guard let pk = id.primaryKey, let layout = model.resolved.entities[id.entityName] else { continue }
            byRoot[layout.rootName, default: []].append(pk)
        }
        let oneStatement = byRoot.count == 1 && ids.count <= 500
        func body(_ db: Database) throws -> [StoreRow] {
            var rows: [StoreRow] = []
            for (root, pks) in byRoot {
                guard let spec = rowSpecs[root] else { continue }
                for start in stride(from: 0, to: pks.count, by: 500) {
                    let chunk = StatementShape.padded(Array(pks[start..<min(start + 500, pks.count)]))
                    let sql =
                        "SELECT \(spec.selectList("t0")) FROM \(quoted(root)) AS t0 WHERE t0.Z_PK IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ",")))"
                    let statement = try db.cachedStatement(sql: sql)
                    statement.setUncheckedArguments(StatementArguments(chunk))
                    let cursor = try Row.fetchCursor(statement)
                    while try cursor.next() != nil {
                        if let row = readRow(statement.sqliteStatement, spec) { rows.append(row) }
                    }
                }
            }
            return rows
        }
        return oneStatement ? try readOneStatement("load rows", body) : try read("load rows", body)
    }

    func loadToMany(_ owner: ManagedObjectID, _ relationship: ResolvedRelationship) throws(AmbarError) -> [ManagedObjectID] {
        guard let pk = owner.primaryKey else { return [] }
        let destination = try model.resolved.layout(relationship.description.destination)
        guard let sql = RelationshipSQL.destinations(of: relationship, destinationRoot: destination.rootName, placeholder: "?") else { return [] }
        return try readOneStatement("load relationship") { db in
            let statement = try db.cachedStatement(sql: sql)
            statement.setUncheckedArguments([pk])
            var ids: [ManagedObjectID] = []
            let cursor = try Row.fetchCursor(statement)
            while try cursor.next() != nil {
                let s = statement.sqliteStatement
                guard let name = entityNames[sqlite3_column_int64(s, 1)] else { continue }
                ids.append(ManagedObjectID(entityName: name, storeIdentifier: identifier, primaryKey: sqlite3_column_int64(s, 0)))
            }
            return ids
        }
    }

    // MARK: - Writing helpers

    func write<T>(_ operation: String, _ body: (Database) throws -> T) throws(AmbarError) -> T {
        do {
            return try writer.writeWithoutTransaction { db in
                try Self.immediateTransaction(db, path: location, operation: operation) { try body(db) }
            }
        } catch {
            throw SQLiteValues.wrap(error, operation)
        }
    }

    /// Runs `body` in an IMMEDIATE transaction and commits it; on any error, rolls back and
    /// rethrows. A full disk or a read-only file system comes out as
    /// ``AmbarError/storeFull(path:operation:)`` or ``AmbarError/storeReadOnly(path:reason:)``:
    /// the system error behind SQLite's code is read before the rollback can overwrite it.
    static func immediateTransaction<T>(_ db: Database, path: String, operation: String, _ body: () throws -> T) throws -> T {
        try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        do {
            let result = try body()
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
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

    func allocatePrimaryKeys(entity: String, count: Int) throws(AmbarError) -> [Int64] {
        let layout = try model.resolved.layout(entity)
        guard count > 0 else { return [] }
        let first = try write("allocate primary keys") { db in try allocate(db, root: layout.rootName, count: count) }
        return (0..<Int64(count)).map { first + $0 }
    }
}
