import AmbarCore
import AmbarSQL
import Foundation

/// The change ledger in PostgreSQL: the SQLite store's tables (`ambar_transactions` with each
/// transaction's changes in one value, `ambar_cursors`, `ambar_receipts`) and `ambar_ledger_head`.
///
/// Tokens are commit-ordered: a saving transaction takes the next token by updating the one row
/// of `ambar_ledger_head` as its last write, and that row stays locked until it commits. A
/// concurrent save waits there, then takes the following token, so the transaction holding token
/// 7 has always committed (or rolled back, leaving 7 unused) before token 8 can exist. A follower
/// that reads past 8 has never skipped 7.
extension PostgreSQLStore {
    /// Writes `entry` inside the current transaction and returns its token: one statement takes
    /// the token, appends the transaction with its changes, rings the doorbell and reads the
    /// store's model hash. A hash other than this store's model throws
    /// ``AmbarError/storeMigrated(storeHash:modelHash:)`` (the save rolls back): checked here, in
    /// the save's last statement, rather than in a statement of its own before the writes — the
    /// outcome is the same, since the transaction is all or nothing.
    func writeLedger(_ connection: any SQLServerConnection, _ entry: LedgerEntry) throws -> Int64? {
        guard !entry.isEmpty else {
            try checkModelIsCurrent(connection)
            return nil
        }
        return try appendToLedger(connection, author: entry.author, contextName: entry.contextName, entry: entry)
    }

    /// Appends a transaction (`entry`'s changes, or none for a marker), in one statement; see
    /// ``writeLedger(_:_:)``.
    private func appendToLedger(_ connection: any SQLServerConnection, author: String?, contextName: String?, entry: LedgerEntry?) throws -> Int64 {
        let statement = try ledgerStatement(author: author, contextName: contextName, entry: entry, writes: [], firstParameter: 1)
        return try ledgerToken(connection.queryRecurring(statement.sql, statement.parameters).first)
    }

    /// The statement that appends a transaction: `writes` (`name AS (statement)` common table
    /// expressions, whose parameters come before the ledger's, which are numbered from
    /// `firstParameter`) run in the same statement. Its one row: the token, the doorbell, the
    /// store's model hash. With `refusingUnless`, the statement fails (SQLSTATE 22012, a division
    /// by zero, which undoes all of it) unless that condition holds and the store's model is this
    /// store's model.
    func ledgerStatement(
        author: String?, contextName: String?, entry: LedgerEntry?, writes: [String], refusingUnless condition: String? = nil, firstParameter p: Int
    ) throws
        -> (sql: String, parameters: [SQLServerValue])
    {
        let changes: SQLServerValue = try entry.map { entry throws(AmbarError) in .blob(try LedgerChangeEncoding.encode(entry)) } ?? .null
        let notice = StoreChangeNotice(token: 0, instanceID: ProcessInstance.id, processID: getpid(), changes: entry.map(Self.noticeKeys))
        // With writes of its own, the statement takes its rows' locks before the ledger head's,
        // as a save's transaction does (its rows, then the ledger): the head's condition reads
        // the writes first. The other order would let the two deadlock.
        let afterWrites = condition.map { " AND (\($0)) IS NOT NULL" } ?? ""
        let ctes =
            writes + [
                "head AS (UPDATE ambar_ledger_head SET token = token + 1 WHERE id = 1\(afterWrites) RETURNING token)",
                """
                entry AS (
                    INSERT INTO ambar_transactions (token, timestamp, author, pid, context_name, instance, changes)
                    SELECT token, $\(p)::double precision, $\(p + 1)::text, $\(p + 2)::bigint, $\(p + 3)::text, $\(p + 4)::bigint, $\(p + 5)::bytea
                    FROM head RETURNING token)
                """,
            ]
        let refusal =
            condition.map {
                ",\n    1 / ((\($0)) AND (SELECT value FROM ambar_metadata WHERE key = 'model_hash') = $\(p + 8)::text)::int"
            } ?? ""
        let sql = """
            WITH \(ctes.joined(separator: ",\n"))
            SELECT entry.token, pg_notify($\(p + 6)::text, 'a1 ' || entry.token || $\(p + 7)::text),
                (SELECT value FROM ambar_metadata WHERE key = 'model_hash')\(refusal)
            FROM entry
            """
        let parameters: [SQLServerValue] = [
            .real(Date().timeIntervalSince1970), author.map { .text($0) } ?? .null, .integer(Int64(getpid())),
            contextName.map { .text($0) } ?? .null, .integer(ProcessInstance.storedID),
            changes, .text(changeChannel), .text(notice.payloadAfterToken),
        ]
        return (sql, condition == nil ? parameters : parameters + [.text(model.versionHash)])
    }

    /// The token from a ledger statement's row; throws when the store's model hash is not this
    /// store's model (``AmbarError/storeMigrated(storeHash:modelHash:)``).
    func ledgerToken(_ row: [SQLServerValue]?) throws -> Int64 {
        guard let row, let token = PostgreSQLValues.integer(row[0]) else {
            throw AmbarError.storeCannotOpen(path: location, reason: "ambar_ledger_head has no row: the store's tables were changed outside Ambar")
        }
        if let hash = PostgreSQLValues.text(row[2]), hash != model.versionHash {
            throw AmbarError.storeMigrated(storeHash: hash, modelHash: model.versionHash)
        }
        return token
    }

    /// Throws ``AmbarError/storeMigrated(storeHash:modelHash:)`` when another process migrated the
    /// store since this one opened it.
    func checkModelIsCurrent(_ connection: any SQLServerConnection) throws {
        let hash = try connection.query("SELECT value FROM ambar_metadata WHERE key = 'model_hash'", []).rows.first.flatMap { PostgreSQLValues.text($0[0]) }
        if let hash, hash != model.versionHash {
            throw AmbarError.storeMigrated(storeHash: hash, modelHash: model.versionHash)
        }
    }

    /// A save's changed keys by entity, for its notice.
    private static func noticeKeys(_ entry: LedgerEntry) -> [String: StoreChangeNotice.EntityKeys] {
        var keys: [String: StoreChangeNotice.EntityKeys] = [:]
        for (group, pks) in entry.groups {
            switch group.kind {
            case .insert: keys[group.entity, default: .init()].inserted += pks
            case .update: keys[group.entity, default: .init()].updated += pks
            case .delete: keys[group.entity, default: .init()].deleted += pks
            }
        }
        return keys
    }

    /// The store's notification channel.
    var changeChannel: String { StoreChangeNotice.channel(storeIdentifier: identifier) }

    func savedToken(forIdempotencyKey key: String) throws(AmbarError) -> Int64? {
        try read("read an idempotency receipt", "SELECT token FROM ambar_receipts WHERE key = $1", [.text(key)]).first.flatMap {
            PostgreSQLValues.integer($0[0])
        }
    }

    func recordMarker(contextName: String) throws(AmbarError) -> Int64 {
        try write("record ledger marker") { connection in
            try appendToLedger(connection, author: nil, contextName: contextName, entry: nil)
        }
    }

    func currentHistoryToken() throws(AmbarError) -> Int64 {
        try read("read history token", "SELECT token FROM ambar_ledger_head WHERE id = 1", []).first.flatMap { PostgreSQLValues.integer($0[0]) } ?? 0
    }

    private static func purgedThrough(_ connection: any SQLServerConnection) throws -> Int64 {
        Int64(
            try connection.query("SELECT value FROM ambar_metadata WHERE key = 'history_purged_through'", []).rows.first.flatMap {
                PostgreSQLValues.text($0[0])
            } ?? "0") ?? 0
    }

    /// One statement, so one snapshot and one round trip: the purge point beside the transactions
    /// after `token` (none: one row of NULLs after the purge point).
    func history(after token: Int64, limit: Int?) throws(AmbarError) -> [HistoryTransaction] {
        let rows = try read("read history", "\(Self.historySelect(limit: limit, leadingNulls: 0)) ORDER BY t.token", [.integer(token)])
        return try transactions(in: rows, from: 0, after: token)
    }

    /// The SELECT of the purge point and the transactions after `$1` (at most `limit`), its
    /// columns after `leadingNulls` NULLs: the purge point, then token, timestamp, author, pid,
    /// context name, instance and changes (``historyColumns`` in all).
    static func historySelect(limit: Int?, leadingNulls: Int) -> String {
        """
        SELECT \(String(repeating: "NULL, ", count: leadingNulls))m.value, t.token, t.timestamp, t.author, t.pid, t.context_name, t.instance, t.changes
        FROM (SELECT value FROM ambar_metadata WHERE key = 'history_purged_through') AS m
        LEFT JOIN LATERAL (
            SELECT token, timestamp, author, pid, context_name, instance, changes FROM ambar_transactions
            WHERE token > $1 ORDER BY token LIMIT \(limit.map { String(max(0, $0)) } ?? "ALL")
        ) AS t ON true
        """
    }

    /// How many columns ``historySelect(limit:leadingNulls:)`` has after its leading NULLs.
    static let historyColumns = 8

    /// The transactions of rows of ``historySelect(limit:leadingNulls:)`` whose columns start at
    /// `first`, in the order given; throws ``AmbarError/historyExpired(after:purgedThrough:)``
    /// when the purge point is past `token`.
    func transactions(in rows: [[SQLServerValue]], from first: Int, after token: Int64) throws(AmbarError) -> [HistoryTransaction] {
        let purged = rows.first.flatMap { PostgreSQLValues.text($0[first]) }.flatMap { Int64($0) } ?? 0
        if token < purged { throw .historyExpired(after: token, purgedThrough: purged) }
        var result: [HistoryTransaction] = []
        result.reserveCapacity(rows.count)
        for row in rows {
            guard let t = PostgreSQLValues.integer(row[first + 1]) else { continue }
            var gathered = LedgerChanges(store: identifier)
            if case .blob(let changes) = row[first + 7] { try gathered.add(encoded: changes, location: location) }
            result.append(
                HistoryTransaction(
                    token: t, timestamp: Date(timeIntervalSince1970: PostgreSQLValues.real(row[first + 2]) ?? 0),
                    author: PostgreSQLValues.text(row[first + 3]),
                    processID: Int32(truncatingIfNeeded: PostgreSQLValues.integer(row[first + 4]) ?? 0),
                    instanceID: PostgreSQLValues.integer(row[first + 6]).map { UInt64(bitPattern: $0) },
                    contextName: PostgreSQLValues.text(row[first + 5]),
                    inserted: gathered.inserted, updated: gathered.updated, deleted: gathered.deleted,
                    updatedProperties: gathered.updatedProperties, tombstones: gathered.tombstones))
        }
        return result
    }

    @discardableResult
    func setHistoryCursor(_ consumer: String, token: Int64, lease: TimeInterval?, lockWait: TimeInterval?) throws(AmbarError) -> Bool {
        try statement(
            "set history cursor", lockWait: lockWait,
            """
            INSERT INTO ambar_cursors (consumer, token, last_seen, lease) VALUES ($1, $2, $3, $4::double precision)
            ON CONFLICT (consumer) DO UPDATE SET token = excluded.token, last_seen = excluded.last_seen, lease = excluded.lease
            """, [.text(consumer), .integer(token), .real(Date().timeIntervalSince1970), lease.map { .real($0) } ?? .null])
    }

    func historyCursors() throws(AmbarError) -> [HistoryCursor] {
        try read("read history cursors", "SELECT consumer, token, last_seen, lease FROM ambar_cursors ORDER BY consumer COLLATE \"C\"", []).compactMap { row in
            guard let consumer = PostgreSQLValues.text(row[0]), let token = PostgreSQLValues.integer(row[1]) else { return nil }
            return HistoryCursor(
                consumer: consumer, token: token, lastSeen: Date(timeIntervalSince1970: PostgreSQLValues.real(row[2]) ?? 0),
                lease: PostgreSQLValues.real(row[3]))
        }
    }

    @discardableResult
    func removeHistoryCursor(_ consumer: String, lockWait: TimeInterval?) throws(AmbarError) -> Bool {
        try statement("remove history cursor", lockWait: lockWait, "DELETE FROM ambar_cursors WHERE consumer = $1", [.text(consumer)])
    }

    /// Runs one writing statement and returns true: on its own (autocommit) when `lockWait` is
    /// nil, or in a transaction whose `lock_timeout` is `lockWait`. Past that (SQLSTATE 55P03)
    /// the transaction rolls back and it returns false: nothing was written.
    private func statement(_ operation: String, lockWait: TimeInterval?, _ sql: String, _ parameters: [SQLServerValue]) throws(AmbarError) -> Bool {
        guard let lockWait else {
            _ = try read(operation, sql, parameters)
            return true
        }
        // At least 1 ms (0 would mean no limit), at most a day; not a number waits a second.
        let milliseconds = lockWait.isNaN ? 1000 : Int((min(max(lockWait, 0.001), 86_400) * 1000).rounded())
        return try write(operation) { connection in
            _ = try connection.query("SET LOCAL lock_timeout = \(milliseconds)", [])
            do {
                _ = try connection.query(sql, parameters)
                return true
            } catch let error as SQLServerError where error.sqlState == "55P03" {
                // The transaction is aborted: its COMMIT rolls it back.
                return false
            }
        }
    }

    /// Removes the ledger through `limit` and records it; inside the caller's transaction.
    private static func purge(_ connection: any SQLServerConnection, through limit: Int64) throws -> Int {
        let removed = try connection.query("DELETE FROM ambar_transactions WHERE token <= $1", [.integer(limit)]).affectedRows
        _ = try connection.query("UPDATE ambar_metadata SET value = $1 WHERE key = 'history_purged_through'", [.text(String(limit))])
        return removed
    }

    func purgeHistory(through token: Int64, lease: TimeInterval) throws(AmbarError) -> Int64 {
        try write("purge history") { connection in
            let oldestLive = try connection.query(
                "SELECT min(token) FROM ambar_cursors WHERE last_seen >= $1 - least(coalesce(lease, $2), $2)",
                [.real(Date().timeIntervalSince1970), .real(lease)]
            ).rows.first.flatMap { PostgreSQLValues.integer($0[0]) }
            let limit = min(token, oldestLive ?? token)
            let purged = try Self.purgedThrough(connection)
            guard limit > purged else { return purged }
            _ = try Self.purge(connection, through: limit)
            return limit
        }
    }

    func purgeHistory(_ retention: HistoryRetention, now: Date) throws(AmbarError) -> HistoryPurge {
        try write("purge history") { connection in
            let time = now.timeIntervalSince1970
            // A position recorded by a clock ahead of this one counts as seen now (see the SQLite
            // store): it ages by this clock.
            _ = try connection.query("UPDATE ambar_cursors SET last_seen = $1 WHERE last_seen > $1", [.real(time)])
            // Sharing processes' merge positions go when their lease ran out; durable consumers'
            // stay, but hold history back only within the consumer lease.
            let cursorsRemoved = try connection.query(
                "DELETE FROM ambar_cursors WHERE lease IS NOT NULL AND last_seen < $1 - least(lease, $2)", [.real(time), .real(retention.consumerLease)]
            ).affectedRows
            let receiptsRemoved = try connection.query("DELETE FROM ambar_receipts WHERE saved < $1", [.real(time - retention.receipts)]).affectedRows
            let purged = try Self.purgedThrough(connection)
            // Age by the purging process's clock, from the marks purges leave (see the SQLite
            // store): writers' clocks do not count.
            let head = try connection.query("SELECT token FROM ambar_ledger_head WHERE id = 1", []).rows.first.flatMap { PostgreSQLValues.integer($0[0]) } ?? 0
            let lastMarked = try connection.query("SELECT head FROM ambar_ledger_marks ORDER BY id DESC LIMIT 1", []).rows.first.flatMap {
                PostgreSQLValues.integer($0[0])
            }
            let marked = head != (lastMarked ?? 0)
            if marked { _ = try connection.query("INSERT INTO ambar_ledger_marks (at, head) VALUES ($1, $2)", [.real(time), .integer(head)]) }
            let cutoff = time - retention.history
            var limit =
                try connection.query("SELECT max(head) FROM ambar_ledger_marks WHERE at <= $1", [.real(cutoff)]).rows.first.flatMap {
                    PostgreSQLValues.integer($0[0])
                } ?? purged
            _ = try connection.query(
                "DELETE FROM ambar_ledger_marks WHERE at < (SELECT max(at) FROM ambar_ledger_marks WHERE at <= $1)", [.real(cutoff)])
            if let oldestLive = try connection.query(
                "SELECT min(token) FROM ambar_cursors WHERE lease IS NOT NULL OR last_seen >= $1", [.real(time - retention.consumerLease)]
            ).rows.first.flatMap({ PostgreSQLValues.integer($0[0]) }) {
                limit = min(limit, oldestLive)
            }
            var removed = 0
            if limit > purged { removed = try Self.purge(connection, through: limit) }
            if marked || removed + cursorsRemoved + receiptsRemoved > 0 {
                _ = try connection.query(
                    """
                    INSERT INTO ambar_metadata (key, value) VALUES ('purge_count', '1')
                    ON CONFLICT (key) DO UPDATE SET value = (CAST(ambar_metadata.value AS bigint) + 1)::text
                    """, [])
            }
            return HistoryPurge(
                purgedThrough: max(limit, purged), transactionsRemoved: removed, cursorsRemoved: cursorsRemoved, receiptsRemoved: receiptsRemoved)
        }
    }

    func historySummary() throws(AmbarError) -> HistorySummary {
        try pool.withConnection("summarise history") { connection in
            try Self.transaction(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                let row = try connection.query("SELECT min(token), count(*) FROM ambar_transactions", []).rows.first
                let head =
                    try connection.query("SELECT token FROM ambar_ledger_head WHERE id = 1", []).rows.first.flatMap { PostgreSQLValues.integer($0[0]) } ?? 0
                let purges = try connection.query("SELECT value FROM ambar_metadata WHERE key = 'purge_count'", []).rows.first.flatMap {
                    PostgreSQLValues.text($0[0])
                }
                return HistorySummary(
                    oldestToken: row.flatMap { PostgreSQLValues.integer($0[0]) }, headToken: head,
                    transactions: Int(row.flatMap { PostgreSQLValues.integer($0[1]) } ?? 0), purgedThrough: try Self.purgedThrough(connection),
                    purges: Int(purges ?? "0") ?? 0)
            }
        }
    }
}
