import AmbarCore
import AmbarSQL
import Foundation
import GRDB

/// The ledger's layout 2: each transaction's changes in its own row (`ambar_transactions.changes`,
/// ``LedgerChangeEncoding``), where layout 1 kept a row per entity and kind in `ambar_changes`,
/// and tokens that are the table's rowids (layout 1 took them from AUTOINCREMENT).
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

    /// Whether the store already has layout 2 (its trap view in place, tokens without
    /// AUTOINCREMENT).
    static func ledgerLayoutIsCurrent(_ db: Database) throws -> Bool {
        guard try String.fetchOne(db, sql: "SELECT type FROM sqlite_master WHERE name = 'ambar_changes'") == "view" else { return false }
        return try !tokensUseAutoincrement(db)
    }

    /// Whether the ledger's tokens still come from AUTOINCREMENT (stores made before layout 2).
    private static func tokensUseAutoincrement(_ db: Database) throws -> Bool {
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'ambar_transactions'") ?? ""
        return sql.uppercased().contains("AUTOINCREMENT")
    }

    /// The ledger's head: the newest token ever committed (0 for an empty ledger). Tokens are
    /// the table's rowids, and purging always keeps the newest row, so the next token is always
    /// one past every token ever used.
    static func ledgerHead(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(token), 0) FROM ambar_transactions")) ?? 0
    }

    /// The ledger's head in a store of either layout (one not opened by this Ambar yet keeps it in
    /// `sqlite_sequence`, whose row outlives the purged newest transactions).
    static func ledgerHeadOfAnyLayout(_ db: Database) throws -> Int64 {
        let newest = try ledgerHead(db)
        guard try db.tableExists("sqlite_sequence") else { return newest }
        return max(newest, try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'ambar_transactions'") ?? 0)
    }

    /// Rebuilds `ambar_transactions` without AUTOINCREMENT, whose `sqlite_sequence` row was one
    /// more page written by every commit. The newest token ever used stays the newest row: a
    /// row of its own (with no changes, at or below the purge point, so nobody reads it) when
    /// purging had removed it.
    private static func dropTokenAutoincrement(_ db: Database) throws {
        guard try tokensUseAutoincrement(db) else { return }
        let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'ambar_transactions'") ?? 0
        try db.execute(
            sql: """
                CREATE TABLE ambar_transactions_layout2 (
                    token INTEGER PRIMARY KEY, timestamp REAL NOT NULL, author TEXT,
                    pid INTEGER NOT NULL, context_name TEXT, instance INTEGER, changes BLOB);
                INSERT INTO ambar_transactions_layout2 (token, timestamp, author, pid, context_name, instance, changes)
                    SELECT token, timestamp, author, pid, context_name, instance, changes FROM ambar_transactions;
                DROP TABLE ambar_transactions;
                ALTER TABLE ambar_transactions_layout2 RENAME TO ambar_transactions;
                """)
        if try ledgerHead(db) < sequence {
            try db.execute(
                sql: "INSERT INTO ambar_transactions (token, timestamp, author, pid, context_name, instance, changes) VALUES (?, ?, NULL, ?, ?, NULL, NULL)",
                arguments: [sequence, Date().timeIntervalSince1970, Int64(getpid()), "ledger head kept by the layout-2 upgrade"])
        }
    }

    /// Brings the ledger to layout 2 (see above); a no-op when it is there. Runs inside the
    /// caller's IMMEDIATE transaction.
    static func upgradeLedgerLayout(_ db: Database) throws {
        let columns = Set(try Row.fetchAll(db, sql: "PRAGMA table_info(ambar_transactions)").map { $0["name"] as String })
        if !columns.contains("changes") {
            try db.execute(sql: "ALTER TABLE ambar_transactions ADD COLUMN changes BLOB")
        }
        try dropTokenAutoincrement(db)
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
