import Foundation
import GRDB

/// The ledger's layout 2: each transaction's changes in its own row (`ambar_transactions.changes`,
/// ``LedgerChangeEncoding``), where layout 1 kept a row per entity and kind in `ambar_changes`.
///
/// A store of layout 1 is upgraded in place when it opens, inside the opening IMMEDIATE
/// transaction: every transaction's change rows are encoded into its row, and `ambar_changes`
/// is replaced by a view that fails whenever it is read or written. An Ambar older than layout 2
/// therefore fails on that store with an error naming the cause (it cannot open it — "views may
/// not be indexed" —, and one still running fails at its next ledger read or save) instead of
/// reading transactions without their changes.
extension SQLiteSchema {
    /// The view that stands where layout 1's change rows were: any use of it fails, naming the
    /// missing function (SQLite resolves a view's functions when it is used, not when it is made).
    private static let trapView = """
        CREATE VIEW ambar_changes (token, entity, kind, attributes, pks) AS
        SELECT ambar_ledger_layout_2_needs_a_newer_ambar(), NULL, NULL, NULL, NULL
        """

    /// Whether the store already has layout 2 (its trap view in place).
    static func ledgerLayoutIsCurrent(_ db: Database) throws -> Bool {
        try String.fetchOne(db, sql: "SELECT type FROM sqlite_master WHERE name = 'ambar_changes'") == "view"
    }

    /// Brings the ledger to layout 2 (see above); a no-op when it is there. Runs inside the
    /// caller's IMMEDIATE transaction.
    static func upgradeLedgerLayout(_ db: Database) throws {
        let columns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(ambar_transactions)").map { $0["name"] as String })
        if !columns.contains("changes") {
            try db.execute(sql: "ALTER TABLE ambar_transactions ADD COLUMN changes BLOB")
        }
        switch try String.fetchOne(db, sql: "SELECT type FROM sqlite_master WHERE name = 'ambar_changes'") {
        case "view":
            return
        case "table":
            let moved = try moveChangeRows(db)
            try db.execute(sql: "DROP TABLE ambar_changes")
            SQLiteStore.logger.notice(
                "upgraded the ledger to one row per transaction (layout 2); Ambar versions before it cannot open this store",
                metadata: ["transactions": "\(moved)"])
        default:
            break
        }
        try db.execute(sql: trapView)
        try db.execute(
            sql: "INSERT OR REPLACE INTO ambar_metadata (key, value) VALUES ('schema_version', ?)", arguments: [String(schemaVersion)])
    }

    /// Encodes each transaction's layout-1 change rows into its row; returns how many transactions
    /// had changes.
    private static func moveChangeRows(_ db: Database) throws -> Int {
        let update = try db.cachedStatement(sql: "UPDATE ambar_transactions SET changes = ? WHERE token = ?")
        var token: Int64?
        var groups: [LedgerGroup: [Int64]] = [:]
        var moved = 0
        func flush() throws {
            guard let token, !groups.isEmpty else { return }
            try update.execute(arguments: [LedgerChangeEncoding.encode(groups), token])
            moved += 1
        }
        let rows = try Row.fetchCursor(db, sql: "SELECT token, entity, kind, attributes, pks FROM ambar_changes ORDER BY token, rowid")
        while let row = try rows.next() {
            let rowToken: Int64 = row["token"]
            if rowToken != token {
                try flush()
                token = rowToken
                groups = [:]
            }
            guard let kind = LedgerEntry.Kind(rawValue: row["kind"]) else { continue }
            let attributes: String? = kind == .update ? row["attributes"] : nil
            groups[LedgerGroup(entity: row["entity"], kind: kind, properties: attributes), default: []] += LedgerChangeEncoding.unpackLayout1(row["pks"])
        }
        try flush()
        return moved
    }
}
