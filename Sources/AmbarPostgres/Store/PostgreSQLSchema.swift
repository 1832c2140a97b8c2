import AmbarCore
import AmbarSQL
import Foundation

/// Creates and checks the tables of an Ambar store in a PostgreSQL database.
///
/// The layout is the SQLite store's (one table per root entity with `Z_PK`, `Z_ENT` and `Z_OPT`,
/// join tables, the `ambar_*` tables), with PostgreSQL's types (``PostgreSQLValues``), a sequence
/// per root table for primary keys (the column's default, so rows written outside Ambar get keys
/// from it too) and `ambar_ledger_head`, the row that hands out ledger tokens in commit order.
enum PostgreSQLSchema {
    /// The advisory lock that serialises preparing and migrating (several hosts opening at once).
    static let preparationLock: Int64 = 0x416D_6261_7200  // "Ambar\0"

    static let ambarTables = [
        "ambar_metadata", "ambar_entities", "ambar_ledger_head", "ambar_transactions", "ambar_cursors", "ambar_receipts", "ambar_ledger_marks",
        "ambar_consumer_owners", "ambar_consumer_standbys", "ambar_outbox",
    ]

    /// The store's UUID and entity numbers when it is already prepared for `model` (read without
    /// the lock); `nil` when something must be created or migrated.
    static func alreadyPrepared(_ connection: any SQLServerConnection, model: ManagedObjectModel) throws -> (uuid: String, entityIDs: [String: Int64])? {
        let tables = Set(
            try connection.query(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()", []
            ).rows.compactMap { PostgreSQLValues.text($0[0]) })
        guard ambarTables.allSatisfy(tables.contains), model.resolved.roots.allSatisfy(tables.contains) else { return nil }
        let metadata = try self.metadata(connection)
        guard metadata["model_hash"] == model.versionHash, metadata["schema_version"] == ledgerLayout, let uuid = metadata["store_uuid"] else { return nil }
        let ids = try entityIDs(connection)
        guard model.entities.allSatisfy({ ids[$0.name] != nil }) else { return nil }
        return (uuid, ids)
    }

    static func metadata(_ connection: any SQLServerConnection) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try connection.query("SELECT key, value FROM ambar_metadata", []).rows {
            if let key = PostgreSQLValues.text(row[0]), let value = PostgreSQLValues.text(row[1]) { result[key] = value }
        }
        return result
    }

    static func entityIDs(_ connection: any SQLServerConnection) throws -> [String: Int64] {
        var ids: [String: Int64] = [:]
        for row in try connection.query("SELECT name, id FROM ambar_entities", []).rows {
            if let name = PostgreSQLValues.text(row[0]), let id = PostgreSQLValues.integer(row[1]) { ids[name] = id }
        }
        return ids
    }

    /// Creates whatever is missing, inside the caller's transaction, under the preparation lock:
    /// a second host opening at the same moment waits, then finds everything made.
    static func prepare(_ connection: any SQLServerConnection, model: ManagedObjectModel, location: String) throws -> (uuid: String, entityIDs: [String: Int64])
    {
        _ = try connection.query("SELECT pg_advisory_xact_lock($1), \(markAsAmbarWrite)", [.integer(preparationLock)])
        for statement in [
            "CREATE TABLE IF NOT EXISTS ambar_metadata (key text PRIMARY KEY, value text NOT NULL)",
            "CREATE TABLE IF NOT EXISTS ambar_entities (name text PRIMARY KEY, id bigint NOT NULL UNIQUE)",
            "CREATE TABLE IF NOT EXISTS ambar_ledger_head (id integer PRIMARY KEY CHECK (id = 1), token bigint NOT NULL)",
            "INSERT INTO ambar_ledger_head (id, token) VALUES (1, 0) ON CONFLICT DO NOTHING",
            """
            CREATE TABLE IF NOT EXISTS ambar_transactions (
                token bigint PRIMARY KEY, timestamp double precision NOT NULL, author text,
                pid bigint NOT NULL, context_name text, instance bigint, changes bytea)
            """,
            "CREATE TABLE IF NOT EXISTS ambar_cursors (consumer text PRIMARY KEY, token bigint NOT NULL, last_seen double precision NOT NULL, lease double precision)",
            "CREATE TABLE IF NOT EXISTS ambar_receipts (key text PRIMARY KEY, token bigint NOT NULL, saved double precision NOT NULL)",
            "CREATE TABLE IF NOT EXISTS ambar_consumer_owners (consumer text PRIMARY KEY, owner text NOT NULL, epoch bigint NOT NULL, expires double precision NOT NULL)",
            "CREATE TABLE IF NOT EXISTS ambar_consumer_standbys (consumer text NOT NULL, owner text NOT NULL, expires double precision NOT NULL, PRIMARY KEY (consumer, owner))",
            "CREATE TABLE IF NOT EXISTS ambar_ledger_marks (id bigserial PRIMARY KEY, at double precision NOT NULL, head bigint NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS ambar_outbox (
                id bigserial PRIMARY KEY, consumer text NOT NULL, key text NOT NULL UNIQUE, topic text NOT NULL, payload bytea NOT NULL,
                token bigint NOT NULL, recorded double precision NOT NULL, attempts integer NOT NULL, last_error text,
                not_before double precision NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS ambar_outbox_by_consumer ON ambar_outbox (consumer, id)",
            "INSERT INTO ambar_metadata (key, value) VALUES ('history_purged_through', '0') ON CONFLICT DO NOTHING",
        ] {
            _ = try connection.query(statement, [])
        }
        // Stores made before sharing processes' merge positions had a lease gain the column; their
        // rows keep NULL (durable consumers' positions).
        let cursorColumns = try connection.query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'ambar_cursors'", []
        ).rows.compactMap { PostgreSQLValues.text($0[0]) }
        if !cursorColumns.contains("lease") {
            _ = try connection.query("ALTER TABLE ambar_cursors ADD COLUMN lease double precision", [])
        }
        try upgradeLedgerLayout(connection, location: location)
        let existingHash = try metadata(connection)["model_hash"]
        if let existingHash, existingHash != model.versionHash {
            try migrate(connection, storeHash: existingHash, to: model)
        }
        if existingHash == nil {
            let modelJSON = String(decoding: try JSONEncoder().encode(model), as: UTF8.self)
            for (key, value) in [
                ("store_uuid", UUID().uuidString), ("model_hash", model.versionHash), ("model", modelJSON),
                ("schema_version", ledgerLayout), ("created_at", ISO8601DateFormatter().string(from: Date())),
            ] {
                _ = try connection.query(
                    "INSERT INTO ambar_metadata (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [.text(key), .text(value)])
            }
            try createTables(connection, model: model)
        }
        guard let uuid = try metadata(connection)["store_uuid"] else {
            throw AmbarError.storeCannotOpen(path: location, reason: "the store has no UUID in ambar_metadata")
        }
        return (uuid, try entityIDs(connection))
    }

    /// Brings a store made with another model to `model`: new entities, attributes, relationships
    /// and indexes (lightweight changes that add). Renames and anything that is not lightweight are
    /// refused, changing nothing.
    private static func migrate(_ connection: any SQLServerConnection, storeHash: String, to model: ManagedObjectModel) throws {
        let (plan, _, renamed) = try ModelDifference.migration(storedJSON: try metadata(connection)["model"], storeHash: storeHash, to: model)
        guard plan.renaming.isEmpty else {
            throw AmbarError.migrationRefused(reasons: [
                "the new model renames entities or properties (renamingIdentifier); a PostgreSQL store migrates additions only — rename the tables and columns with SQL, or keep the old names"
            ])
        }
        let resolved = model.resolved
        let columnTypes = self.columnTypes(resolved)
        for root in resolved.roots {
            let existing = Set(
                try connection.query(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1", [.text(root)]
                )
                .rows.compactMap { PostgreSQLValues.text($0[0]) })
            guard !existing.isEmpty else { continue }  // a new root table: created below
            for column in resolved.rootColumns[root] ?? [] where !existing.contains(column.name) {
                _ = try connection.query("ALTER TABLE \(quoted(root)) ADD COLUMN \(quoted(column.name)) \(columnTypes[root]?[column.name] ?? "text")", [])
            }
        }
        for (table, columns) in UniquenessCheck.added(from: renamed, to: model) {
            let rows = try connection.query(UniquenessCheck.duplicatesQuery(table: table, columns: columns), []).rows
            let shared = rows.first.flatMap { PostgreSQLValues.integer($0[0]) } ?? 0
            if shared > 0 { throw UniquenessCheck.refusal(table: table, columns: columns, count: shared) }
        }
        try createTables(connection, model: model)
        let entityIDs = try self.entityIDs(connection)
        for entity in model.entities {
            guard let before = renamed.entities.first(where: { $0.name == entity.name }), let layout = resolved.entities[entity.name] else { continue }
            for attribute in entity.attributes
            where !attribute.isTransient && !attribute.defaultValue.isNull && !before.attributes.contains(where: { $0.name == attribute.name }) {
                let ids = layout.selfAndDescendants.compactMap { entityIDs[$0] }
                guard let i = layout.attributeIndex[attribute.name], let column = layout.attributeColumns[i] else { continue }
                let type = columnTypes[layout.rootName]?[column] ?? "text"
                _ = try connection.query(
                    "UPDATE \(quoted(layout.rootName)) SET \(quoted(column)) = $1\(PostgreSQLValues.cast(type)) WHERE Z_ENT = ANY($2::bigint[])",
                    [PostgreSQLValues.serverValue(attribute.defaultValue), .integerArray(ids)])
            }
        }
        let modelJSON = String(decoding: try JSONEncoder().encode(model), as: UTF8.self)
        for (key, value) in [("model_hash", model.versionHash), ("model", modelJSON), ("migrated_at", ISO8601DateFormatter().string(from: Date()))] {
            _ = try connection.query(
                "INSERT INTO ambar_metadata (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [.text(key), .text(value)])
        }
        PostgreSQLStore.logger.notice("migrated the store to a new model", metadata: ["from": "\(storeHash)", "to": "\(model.versionHash)"])
    }

    /// The PostgreSQL type of every column of every root table.
    static func columnTypes(_ resolved: ResolvedModel) -> [String: [String: String]] {
        var attributeTypes: [String: [String: [AttributeType]]] = [:]
        for layout in resolved.entities.values {
            for (i, column) in layout.attributeColumns.enumerated() {
                guard let column else { continue }
                attributeTypes[layout.rootName, default: [:]][column, default: []].append(layout.attributes[i].type)
            }
        }
        var result: [String: [String: String]] = [:]
        for root in resolved.roots {
            for column in resolved.rootColumns[root] ?? [] {
                result[root, default: [:]][column.name] = PostgreSQLValues.columnType(
                    sqlType: column.sqlType, attributeTypes: attributeTypes[root]?[column.name] ?? [])
            }
        }
        return result
    }

    /// The sequence that hands out a root table's primary keys.
    static func sequence(of root: String) -> String { quoted(identifier("\(root)_pk")) }

    /// The SQL expression that marks the current transaction as Ambar's own: the store's
    /// triggers report every other write to its tables as a write made outside Ambar.
    static let markAsAmbarWrite = "set_config('ambar.writer', 'on', true)"

    /// The statement that marks a whole session as Ambar's, run once on each connection of a
    /// store's pool: its saves then need no statement of their own for it.
    static let markSessionAsAmbars = "SELECT set_config('ambar.writer', 'on', false)"

    /// Statement-level triggers on every table of the model: a write in a transaction that is not
    /// Ambar's sends `a1 foreign` on the store's channel (delivered at commit), so the processes
    /// sharing the store re-read what they hold.
    private static func installForeignWriteTriggers(_ connection: any SQLServerConnection, model: ManagedObjectModel) throws {
        guard let uuid = try metadata(connection)["store_uuid"] else { return }
        let channel = StoreChangeNotice.channel(storeIdentifier: uuid)
        _ = try connection.query(
            """
            CREATE OR REPLACE FUNCTION ambar_foreign_write() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF current_setting('ambar.writer', true) IS DISTINCT FROM 'on' THEN
                    PERFORM pg_notify(TG_ARGV[0], '\(StoreChangeNotice.foreignWritePayload)');
                END IF;
                RETURN NULL;
            END
            $$
            """, [])
        for table in model.resolved.roots + model.resolved.joinTables.map(\.table) {
            _ = try connection.query(
                """
                CREATE OR REPLACE TRIGGER ambar_foreign_write AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(quoted(table))
                FOR EACH STATEMENT EXECUTE FUNCTION ambar_foreign_write('\(channel)')
                """, [])
        }
    }

    private static func createTables(_ connection: any SQLServerConnection, model: ManagedObjectModel) throws {
        let resolved = model.resolved
        let columnTypes = self.columnTypes(resolved)
        var nextID =
            (try connection.query("SELECT COALESCE(max(id), 0) FROM ambar_entities", []).rows.first.flatMap { PostgreSQLValues.integer($0[0]) } ?? 0) + 1
        for name in model.entities.map(\.name).sorted() {
            let inserted = try connection.query(
                "INSERT INTO ambar_entities (name, id) VALUES ($1, $2) ON CONFLICT DO NOTHING", [.text(name), .integer(nextID)])
            if inserted.affectedRows > 0 { nextID += 1 }
        }
        for root in resolved.roots {
            var definitions = ["Z_PK bigint PRIMARY KEY DEFAULT nextval('\(sequence(of: root))')", "Z_ENT bigint NOT NULL", "Z_OPT bigint NOT NULL"]
            definitions += (resolved.rootColumns[root] ?? []).map { "\(quoted($0.name)) \(columnTypes[root]?[$0.name] ?? "text")" }
            _ = try connection.query("CREATE SEQUENCE IF NOT EXISTS \(sequence(of: root))", [])
            _ = try connection.query("CREATE TABLE IF NOT EXISTS \(quoted(root)) (\(definitions.joined(separator: ", ")))", [])
            _ = try connection.query("ALTER SEQUENCE \(sequence(of: root)) OWNED BY \(quoted(root)).Z_PK", [])
        }
        for join in resolved.joinTables {
            let order = join.orderColumns.map { ", \(quoted($0)) bigint" }.joined()
            _ = try connection.query(
                "CREATE TABLE IF NOT EXISTS \(quoted(join.table)) (src bigint NOT NULL, dst bigint NOT NULL\(order), PRIMARY KEY (src, dst))", [])
            for column in join.orderColumns {
                _ = try connection.query("ALTER TABLE \(quoted(join.table)) ADD COLUMN IF NOT EXISTS \(quoted(column)) bigint", [])
            }
        }
        for (_, indexes) in indexes(of: model).sorted(by: { $0.key < $1.key }) {
            for index in indexes { _ = try connection.query(index, []) }
        }
        try installForeignWriteTriggers(connection, model: model)
    }

    /// The CREATE INDEX statements `model` wants, by table (``SchemaIndexes``, the same as the
    /// SQLite store's, with names that fit PostgreSQL's 63 bytes).
    static func indexes(of model: ManagedObjectModel) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for (table, indexes) in SchemaIndexes.indexes(of: model) {
            result[table] = indexes.map { index in
                index.sql
                    .replacingOccurrences(of: "\(quoted(index.name))", with: quoted(identifier(index.name)))
                    .replacingOccurrences(of: "\"Z_ENT\"", with: "Z_ENT")
            }
        }
        return result
    }

    /// `name` as a PostgreSQL identifier: names longer than 63 bytes are cut and end with a hash
    /// of the whole name, so two long names never collide.
    static func identifier(_ name: String) -> String {
        guard name.utf8.count > 63 else { return name }
        var prefix = ""
        for character in name {
            if prefix.utf8.count + String(character).utf8.count > 46 { break }
            prefix.append(character)
        }
        return prefix + "_" + String(FNV1a(name.utf8).value, radix: 16)
    }
}
