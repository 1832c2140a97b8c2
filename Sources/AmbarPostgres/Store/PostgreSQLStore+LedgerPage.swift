import AmbarCore
import AmbarSQL
import Foundation

extension PostgreSQLStore {
    /// A page of the ledger and the rows its transactions changed. When the caller expects rows
    /// (a doorbell's claim), the page and the expected rows of one table are read in **one**
    /// statement, one round trip and one snapshot: a `UNION ALL` of the table's rows (their
    /// columns first, the ledger's as NULLs) and the ledger's rows (the table's columns as
    /// NULLs). What the ledger names beyond them is read after, as without a hint; rows read for
    /// objects it does not name are dropped.
    func ledgerPage(
        after token: Int64, limit: Int, expecting: Set<ManagedObjectID>, rowsOf select: ([HistoryTransaction]) -> Set<ManagedObjectID>?
    ) throws(AmbarError) -> LedgerPage {
        guard let (root, keys) = largestTable(of: expecting), let spec = rowSpecs[root] else {
            return try ledgerPageInTwoReads(after: token, limit: limit, rowsOf: select)
        }
        let width = spec.columnCount
        let sql = """
            SELECT \(spec.selectListT0)\(String(repeating: ", NULL", count: Self.historyColumns))
            FROM \(quoted(root)) AS t0 WHERE t0.Z_PK = ANY($2::bigint[])
            UNION ALL
            \(Self.historySelect(limit: limit, leadingNulls: width))
            """
        let cells = try pool.withConnection("read history") { connection in
            try connection.queryRecurring(sql, [.integer(token), .integerArray(keys)])
        }
        // The ledger's rows carry the purge point (never NULL); the table's rows do not.
        var ledgerRows: [[SQLServerValue]] = []
        var tableRows: [[SQLServerValue]] = []
        for row in cells {
            if case .null = row[width] { tableRows.append(row) } else { ledgerRows.append(row) }
        }
        // A UNION keeps no order: the page is put in token order here.
        ledgerRows.sort { (PostgreSQLValues.integer($0[width + 1]) ?? 0) < (PostgreSQLValues.integer($1[width + 1]) ?? 0) }
        let transactions = try transactions(in: ledgerRows, from: width, after: token)
        guard let wanted = select(transactions) else { return LedgerPage(transactions: transactions, rows: nil) }
        var rows = tableRows.compactMap { readRow($0, spec) }.filter { wanted.contains($0.id) }
        let read = Set(keys)
        let missing = wanted.filter { id in
            guard let key = id.primaryKey, model.resolved.entities[id.entityName]?.rootName == root else { return true }
            return !read.contains(key)
        }
        if !missing.isEmpty { rows += try loadRows(Array(missing)) }
        return LedgerPage(transactions: transactions, rows: rows)
    }

    /// The table (root entity) most of `ids` are rows of, and their primary keys; nil for none.
    private func largestTable(of ids: Set<ManagedObjectID>) -> (root: String, keys: [Int64])? {
        var byRoot: [String: [Int64]] = [:]
        for id in ids {
            guard let key = id.primaryKey, let layout = model.resolved.entities[id.entityName] else { continue }
            byRoot[layout.rootName, default: []].append(key)
        }
        guard let (root, keys) = byRoot.max(by: { $0.value.count < $1.value.count }) else { return nil }
        return (root, keys.sorted())
    }
}
