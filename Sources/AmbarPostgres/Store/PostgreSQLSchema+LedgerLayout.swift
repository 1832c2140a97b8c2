import AmbarCore
import AmbarSQL
import Foundation

/// The ledger's layout 2 in PostgreSQL: each transaction's changes in its own row
/// (`ambar_transactions.changes`, ``LedgerChangeEncoding``), as in SQLite (see
/// `SQLiteSchema`'s ledger layout).
///
/// A store of layout 1 is upgraded when it opens, under the preparation lock: every
/// transaction's change rows are encoded into its row, and `ambar_changes` is replaced by a view
/// that raises an error naming the cause whenever it is read (and that PostgreSQL refuses to
/// insert into), so an older Ambar fails on the store instead of reading transactions without
/// their changes.
extension PostgreSQLSchema {
    /// The ledger layout this code writes, recorded as the store's `schema_version`.
    static let ledgerLayout = "2"

    /// Brings the ledger to layout 2; a no-op when it is there. Inside the preparing transaction.
    static func upgradeLedgerLayout(_ connection: any SQLServerConnection, location: String) throws {
        _ = try connection.query("ALTER TABLE ambar_transactions ADD COLUMN IF NOT EXISTS changes bytea", [])
        let kind = try connection.query(
            "SELECT c.relkind::text FROM pg_class c WHERE c.relname = 'ambar_changes' AND c.relnamespace = current_schema()::regnamespace", []
        ).rows.first.flatMap { PostgreSQLValues.text($0[0]) }
        if kind == "v" { return }
        if kind == "r" {
            let moved = try moveChangeRows(connection)
            _ = try connection.query("DROP TABLE ambar_changes", [])
            PostgreSQLStore.logger.notice(
                "upgraded the ledger to one row per transaction (layout 2); Ambar versions before it cannot use this store",
                metadata: ["transactions": "\(moved)", "store": "\(location)"])
        }
        _ = try connection.query(
            """
            CREATE OR REPLACE FUNCTION ambar_ledger_layout_2() RETURNS bigint LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'ambar_changes is gone: this store keeps each transaction''s changes in ambar_transactions.changes (ledger layout 2), which this Ambar is too old to read; upgrade it';
            END $$
            """, [])
        _ = try connection.query(
            """
            CREATE VIEW ambar_changes (token, position, entity, kind, attributes, pks) AS
            SELECT ambar_ledger_layout_2(), 0, ''::text, 0, NULL::text, NULL::bytea
            """, [])
        _ = try connection.query(
            "INSERT INTO ambar_metadata (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [.text(ledgerLayout)])
    }

    /// Encodes each transaction's layout-1 change rows into its row; returns how many
    /// transactions had changes.
    private static func moveChangeRows(_ connection: any SQLServerConnection) throws -> Int {
        var byToken: [Int64: [LedgerGroup: [Int64]]] = [:]
        for row in try connection.query("SELECT token, entity, kind, attributes, pks FROM ambar_changes ORDER BY token, position", []).rows {
            guard let token = PostgreSQLValues.integer(row[0]), let entity = PostgreSQLValues.text(row[1]),
                let kind = PostgreSQLValues.integer(row[2]).flatMap({ LedgerEntry.Kind(rawValue: Int($0)) }), case .blob(let packed) = row[4]
            else { continue }
            let group = LedgerGroup(entity: entity, kind: kind, properties: kind == .update ? PostgreSQLValues.text(row[3]) : nil)
            byToken[token, default: [:]][group, default: []] += LedgerChangeEncoding.unpackLayout1(packed)
        }
        for (token, groups) in byToken {
            _ = try connection.query(
                "UPDATE ambar_transactions SET changes = $1 WHERE token = $2", [.blob(LedgerChangeEncoding.encode(groups)), .integer(token)])
        }
        return byToken.count
    }
}
