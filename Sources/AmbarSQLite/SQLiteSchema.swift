import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite

/// Creates and checks the tables of an Ambar SQLite store.
///
/// Layout: one table per root entity (sub-entities share it, told apart by `Z_ENT`), with `Z_PK`
/// (primary key), `Z_ENT` (entity number) and `Z_OPT` (row version, for optimistic locking); a
/// join table per many-to-many relationship; and the `ambar_*` tables: metadata, entity numbers,
/// the primary-key allocator, and the change ledger (one row per transaction with its changes,
/// consumers' positions, and the marks by which purging tells the ledger's age).
package enum SQLiteSchema {
    /// The layout version of the tables this code writes.
    static let schemaVersion = 2

    /// Creates whatever is missing and returns the store's metadata. Runs inside an IMMEDIATE
    /// transaction, so concurrent openers in other processes serialize here.
    static func prepare(_ db: Database, model: ManagedObjectModel) throws -> (uuid: String, entityIDs: [String: Int64]) {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS ambar_metadata (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS ambar_entities (name TEXT PRIMARY KEY NOT NULL, id INTEGER NOT NULL UNIQUE);
                CREATE TABLE IF NOT EXISTS ambar_primarykeys (root TEXT PRIMARY KEY NOT NULL, max_pk INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS ambar_transactions (
                    token INTEGER PRIMARY KEY, timestamp REAL NOT NULL, author TEXT,
                    pid INTEGER NOT NULL, context_name TEXT, instance INTEGER, changes BLOB);
                CREATE TABLE IF NOT EXISTS ambar_cursors (consumer TEXT PRIMARY KEY NOT NULL, token INTEGER NOT NULL, last_seen REAL NOT NULL, lease REAL);
                CREATE TABLE IF NOT EXISTS ambar_receipts (key TEXT PRIMARY KEY NOT NULL, token INTEGER NOT NULL, saved REAL NOT NULL);
                CREATE TABLE IF NOT EXISTS ambar_consumer_owners (consumer TEXT PRIMARY KEY NOT NULL, owner TEXT NOT NULL, epoch INTEGER NOT NULL, expires REAL NOT NULL);
                CREATE TABLE IF NOT EXISTS ambar_consumer_standbys (consumer TEXT NOT NULL, owner TEXT NOT NULL, expires REAL NOT NULL, PRIMARY KEY (consumer, owner));
                CREATE TABLE IF NOT EXISTS ambar_ledger_marks (at REAL NOT NULL, head INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS ambar_outbox (
                    id INTEGER PRIMARY KEY, consumer TEXT NOT NULL, key TEXT NOT NULL UNIQUE, topic TEXT NOT NULL,
                    payload BLOB NOT NULL, token INTEGER NOT NULL, recorded REAL NOT NULL, attempts INTEGER NOT NULL,
                    last_error TEXT, not_before REAL NOT NULL);
                CREATE INDEX IF NOT EXISTS ambar_outbox_by_consumer ON ambar_outbox (consumer, id);
                INSERT OR IGNORE INTO ambar_metadata (key, value) VALUES ('history_purged_through', '0');
                """)
        // Stores made before transactions carried their process instance gain the column; their
        // old rows keep NULL (no instance: never taken for this process's own).
        let ledgerColumns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(ambar_transactions)").map { $0["name"] as String })
        if !ledgerColumns.contains("instance") {
            try db.execute(sql: "ALTER TABLE ambar_transactions ADD COLUMN instance INTEGER")
        }
        // Stores made before sharing processes' merge positions had a lease gain the column; their
        // rows keep NULL (durable consumers' positions).
        if !(try cursorColumns(db)).contains("lease") {
            try db.execute(sql: "ALTER TABLE ambar_cursors ADD COLUMN lease REAL")
        }
        try upgradeLedgerLayout(db)
        let existingHash = try String.fetchOne(db, sql: "SELECT value FROM ambar_metadata WHERE key = 'model_hash'")
        if let existingHash, existingHash != model.versionHash {
            try migrate(db, storeHash: existingHash, to: model)
        }
        if existingHash == nil {
            let modelJSON = String(decoding: try JSONEncoder().encode(model), as: UTF8.self)
            let uuid = UUID().uuidString
            let rows: [(String, String)] = [
                ("store_uuid", uuid), ("model_hash", model.versionHash), ("model", modelJSON),
                ("schema_version", String(schemaVersion)),
                ("created_at", ISO8601DateFormatter().string(from: Date())),
            ]
            for (key, value) in rows {
                try db.execute(sql: "INSERT OR REPLACE INTO ambar_metadata (key, value) VALUES (?, ?)", arguments: [key, value])
            }
            try createTables(db, model: model)
        }
        guard let uuid = try String.fetchOne(db, sql: "SELECT value FROM ambar_metadata WHERE key = 'store_uuid'") else {
            throw AmbarError.storeCannotOpen(path: db.description, reason: "the store has no UUID in ambar_metadata")
        }
        var ids: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, id FROM ambar_entities") {
            ids[row[0]] = row[1]
        }
        return (uuid, ids)
    }

    /// Brings a store made with another model to `model` in place, inside the caller's IMMEDIATE
    /// transaction: other processes opening the store wait, then find it migrated. Refuses (and
    /// changes nothing) what is not a lightweight change, and a store already newer than `model`.
    private static func migrate(_ db: Database, storeHash: String, to model: ManagedObjectModel) throws {
        let json = try String.fetchOne(db, sql: "SELECT value FROM ambar_metadata WHERE key = 'model'")
        let (plan, stored, renamed) = try ModelDifference.migration(storedJSON: json, storeHash: storeHash, to: model)
        // Renames first (tables, columns, join tables), then new columns (indexes need them),
        // then stale indexes dropped, new tables and indexes created, renamed join tables
        // copied back, and the defaults of new attributes filled into the rows that exist.
        let outcome = try applyRenames(db, from: stored, as: renamed, plan.renaming)
        let resolved = model.resolved
        for root in resolved.roots {
            let existing = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(quoted(root)))").map { $0["name"] as String })
            guard !existing.isEmpty else { continue }  // a new root table: created below
            for column in resolved.rootColumns[root] ?? [] where !existing.contains(column.name) {
                try db.execute(sql: "ALTER TABLE \(quoted(root)) ADD COLUMN \(quoted(column.name)) \(column.sqlType)")
            }
        }
        let wanted = SchemaIndexes.indexes(of: model)
        for table in resolved.roots + resolved.joinTables.map(\.table) {
            // Renamed tables lose all their indexes; the others only those the model dropped.
            let keep = outcome.touchedTables.contains(table) ? [] : Set(wanted[table, default: []].map(\.name))
            try dropIndexes(db, on: table, keeping: keep)
        }
        for (table, columns) in UniquenessCheck.added(from: renamed, to: model) {
            let shared = try Int64.fetchOne(db, sql: UniquenessCheck.duplicatesQuery(table: table, columns: columns)) ?? 0
            if shared > 0 { throw UniquenessCheck.refusal(table: table, columns: columns, count: shared) }
        }
        try createTables(db, model: model)
        try finishJoinCopies(db, outcome)
        var entityIDs: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, id FROM ambar_entities") { entityIDs[row[0]] = row[1] }
        for entity in model.entities {
            let before = renamed.entities.first { $0.name == entity.name }
            guard let before, let layout = resolved.entities[entity.name] else { continue }
            for attribute in entity.attributes
            where !attribute.isTransient && !attribute.defaultValue.isNull && !before.attributes.contains(where: { $0.name == attribute.name }) {
                let ids = layout.selfAndDescendants.compactMap { entityIDs[$0] }
                guard let i = layout.attributeIndex[attribute.name], let column = layout.attributeColumns[i] else { continue }
                try db.execute(
                    sql: "UPDATE \(quoted(layout.rootName)) SET \(quoted(column)) = ? WHERE Z_ENT IN (\(ids.map(String.init).joined(separator: ",")))",
                    arguments: [SQLiteValues.databaseValue(attribute.defaultValue)])
            }
        }
        let modelJSON = String(decoding: try JSONEncoder().encode(model), as: UTF8.self)
        for (key, value) in [("model_hash", model.versionHash), ("model", modelJSON), ("migrated_at", ISO8601DateFormatter().string(from: Date()))] {
            try db.execute(sql: "INSERT OR REPLACE INTO ambar_metadata (key, value) VALUES (?, ?)", arguments: [key, value])
        }
        SQLiteStore.logger.notice("migrated the store to a new model", metadata: ["from": "\(storeHash)", "to": "\(model.versionHash)"])
    }

    /// The store's metadata when it is already fully prepared for `model` (the common case of an
    /// existing store opened again), read without taking the write lock; `nil` when
    /// ``prepare(_:model:)`` has something to create, add or migrate. A process can then open a
    /// current store while another client holds the write lock for a long time.
    static func alreadyPrepared(_ db: Database, model: ManagedObjectModel) throws -> (uuid: String, entityIDs: [String: Int64])? {
        for table in [
            "ambar_metadata", "ambar_entities", "ambar_primarykeys", "ambar_transactions", "ambar_cursors", "ambar_receipts", "ambar_ledger_marks",
            "ambar_consumer_owners", "ambar_consumer_standbys", "ambar_outbox",
        ] {
            guard try db.tableExists(table) else { return nil }
        }
        guard try ledgerLayoutIsCurrent(db) else { return nil }
        let metadata = Dictionary(
            try Row.fetchAll(db, sql: "SELECT key, value FROM ambar_metadata").map { ($0["key"] as String, $0["value"] as String) },
            uniquingKeysWith: { a, _ in a })
        guard metadata["model_hash"] == model.versionHash, metadata["history_purged_through"] != nil, let uuid = metadata["store_uuid"] else { return nil }
        let ledgerColumns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(ambar_transactions)").map { $0["name"] as String })
        guard ledgerColumns.contains("instance"), ledgerColumns.contains("changes"), try cursorColumns(db).contains("lease") else { return nil }
        var ids: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, id FROM ambar_entities") { ids[row[0]] = row[1] }
        guard model.entities.allSatisfy({ ids[$0.name] != nil }) else { return nil }
        for root in model.resolved.roots { guard try db.tableExists(root) else { return nil } }
        return (uuid, ids)
    }

    /// The columns of the positions' table.
    private static func cursorColumns(_ db: Database) throws -> Set<String> {
        Set(try Row.fetchAll(db, sql: "PRAGMA table_info(ambar_cursors)").map { $0["name"] as String })
    }

    /// Throws ``AmbarError/storeMigrated(storeHash:modelHash:)`` when another process migrated the
    /// store since this one opened it: its writes would not fit the tables any more.
    static func checkModelIsCurrent(_ db: Database, model: ManagedObjectModel) throws {
        // Read straight from the statement: this runs in every save.
        let handle = try db.cachedStatement(sql: "SELECT value FROM ambar_metadata WHERE key = 'model_hash'").sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_ROW || code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        guard code == SQLITE_ROW, sqlite3_column_type(handle, 0) != SQLITE_NULL, let text = sqlite3_column_text(handle, 0) else { return }
        let hash = String(cString: text)
        if hash != model.versionHash {
            throw AmbarError.storeMigrated(storeHash: hash, modelHash: model.versionHash)
        }
    }

    /// ``AmbarError/storeMigrated(storeHash:modelHash:)`` when the store's model is no longer
    /// `model`; `nil` when it is, or when it cannot be read (an error at hand says more then).
    static func migratedMeanwhile(_ db: Database, model: ManagedObjectModel) -> AmbarError? {
        do {
            try checkModelIsCurrent(db, model: model)
            return nil
        } catch let error as AmbarError {
            if case .storeMigrated = error { return error }
            return nil
        } catch {
            return nil
        }
    }

    private static func createTables(_ db: Database, model: ManagedObjectModel) throws {
        let resolved = model.resolved
        var nextID: Int64 = (try Int64.fetchOne(db, sql: "SELECT max(id) FROM ambar_entities") ?? 0) + 1
        for name in model.entities.map(\.name).sorted() {
            try db.execute(sql: "INSERT OR IGNORE INTO ambar_entities (name, id) VALUES (?, ?)", arguments: [name, nextID])
            nextID += 1
        }
        for root in resolved.roots {
            let columns = resolved.rootColumns[root] ?? []
            var definitions = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER NOT NULL", "Z_OPT INTEGER NOT NULL"]
            definitions += columns.map { "\(quoted($0.name)) \($0.sqlType)" }
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(quoted(root)) (\(definitions.joined(separator: ", ")))")
            try db.execute(sql: "INSERT OR IGNORE INTO ambar_primarykeys (root, max_pk) VALUES (?, 0)", arguments: [root])
        }
        for join in resolved.joinTables {
            let order = join.orderColumns.map { ", \(quoted($0)) INTEGER" }.joined()
            try db.execute(
                sql:
                    "CREATE TABLE IF NOT EXISTS \(quoted(join.table)) (src INTEGER NOT NULL, dst INTEGER NOT NULL\(order), PRIMARY KEY (src, dst)) WITHOUT ROWID"
            )
            // A relationship that became ordered: its join table gains the order column.
            let existing = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(\(quoted(join.table)))").map { $0["name"] as String })
            for column in join.orderColumns where !existing.contains(column) {
                try db.execute(sql: "ALTER TABLE \(quoted(join.table)) ADD COLUMN \(quoted(column)) INTEGER")
            }
        }
        let wanted = SchemaIndexes.indexes(of: model)
        for table in wanted.keys.sorted() {
            for index in wanted[table] ?? [] { try db.execute(sql: index.sql) }
        }
    }
}
