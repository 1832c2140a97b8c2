import Foundation

/// The change ledger in PostgreSQL: the SQLite store's tables (`ambar_transactions`,
/// `ambar_changes`, `ambar_cursors`, `ambar_receipts`) and `ambar_ledger_head`.
///
/// Tokens are commit-ordered: a saving transaction takes the next token by updating the one row
/// of `ambar_ledger_head` as its last write, and that row stays locked until it commits. A
/// concurrent save waits there, then takes the following token, so the transaction holding token
/// 7 has always committed (or rolled back, leaving 7 unused) before token 8 can exist. A follower
/// that reads past 8 has never skipped 7.
extension PostgreSQLStore {
    /// Writes `entry` inside the current transaction and returns its token.
    func writeLedger(_ connection: any SQLServerConnection, _ entry: LedgerEntry) throws -> Int64? {
        guard !entry.isEmpty else { return nil }
        let token = try nextToken(connection)
        _ = try connection.query(
            "INSERT INTO ambar_transactions (token, timestamp, author, pid, context_name, instance) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                .integer(token), .real(Date().timeIntervalSince1970), entry.author.map { .text($0) } ?? .null, .integer(Int64(getpid())),
                entry.contextName.map { .text($0) } ?? .null, .integer(ProcessInstance.storedID),
            ])
        let groups = entry.groups.sorted { ($0.key.entity, $0.key.kind.rawValue) < ($1.key.entity, $1.key.kind.rawValue) }
        var tuples: [String] = []
        var parameters: [SQLServerValue] = [.integer(token)]
        for (position, (group, pks)) in groups.enumerated() {
            let n = parameters.count
            tuples.append("($1, \(position), $\(n + 1), $\(n + 2), $\(n + 3), $\(n + 4))")
            parameters += [
                .text(group.entity), .integer(Int64(group.kind.rawValue)), group.properties.map { .text($0) } ?? .null, .blob(SQLiteStore.pack(pks)),
            ]
        }
        _ = try connection.query(
            "INSERT INTO ambar_changes (token, position, entity, kind, attributes, pks) VALUES \(tuples.joined(separator: ", "))", parameters)
        try notify(connection, token: token, entry)
        return token
    }

    /// Rings the store's doorbell inside the saving transaction: PostgreSQL delivers it at
    /// commit, in commit order, and drops it on rollback.
    private func notify(_ connection: any SQLServerConnection, token: Int64, _ entry: LedgerEntry?) throws {
        var changes: [String: StoreChangeNotice.EntityKeys]? = nil
        if let entry {
            var keys: [String: StoreChangeNotice.EntityKeys] = [:]
            for (group, pks) in entry.groups {
                switch group.kind {
                case .insert: keys[group.entity, default: .init()].inserted += pks
                case .update: keys[group.entity, default: .init()].updated += pks
                case .delete: keys[group.entity, default: .init()].deleted += pks
                }
            }
            changes = keys
        }
        let notice = StoreChangeNotice(token: token, instanceID: ProcessInstance.id, processID: getpid(), changes: changes)
        _ = try connection.query("SELECT pg_notify($1, $2)", [.text(changeChannel), .text(notice.payload)])
    }

    /// The store's notification channel.
    var changeChannel: String { StoreChangeNotice.channel(storeIdentifier: identifier) }

    /// Takes the next token; the row lock is held until the transaction ends.
    private func nextToken(_ connection: any SQLServerConnection) throws -> Int64 {
        guard
            let token = try connection.query("UPDATE ambar_ledger_head SET token = token + 1 WHERE id = 1 RETURNING token", []).rows.first
                .flatMap({ PostgreSQLValues.integer($0[0]) })
        else {
            throw AmbarError.storeCannotOpen(path: location, reason: "ambar_ledger_head has no row: the store's tables were changed outside Ambar")
        }
        return token
    }

    func savedToken(forIdempotencyKey key: String) throws(AmbarError) -> Int64? {
        try read("read an idempotency receipt", "SELECT token FROM ambar_receipts WHERE key = $1", [.text(key)]).first.flatMap {
            PostgreSQLValues.integer($0[0])
        }
    }

    func recordMarker(contextName: String) throws(AmbarError) -> Int64 {
        try write("record ledger marker") { connection in
            let token = try nextToken(connection)
            _ = try connection.query(
                "INSERT INTO ambar_transactions (token, timestamp, author, pid, context_name, instance) VALUES ($1, $2, NULL, $3, $4, $5)",
                [.integer(token), .real(Date().timeIntervalSince1970), .integer(Int64(getpid())), .text(contextName), .integer(ProcessInstance.storedID)])
            try notify(connection, token: token, nil)
            return token
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

    func history(after token: Int64, limit: Int?) throws(AmbarError) -> [HistoryTransaction] {
        let result: Result<[HistoryTransaction], AmbarError> = try pool.withConnection("read history") { connection in
            try Self.transaction(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                let purged = try Self.purgedThrough(connection)
                if token < purged { return .failure(.historyExpired(after: token, purgedThrough: purged)) }
                let rows = try connection.query(
                    """
                    SELECT token, timestamp, author, pid, context_name, instance FROM ambar_transactions
                    WHERE token > $1 ORDER BY token LIMIT \(limit.map { String(max(0, $0)) } ?? "ALL")
                    """, [.integer(token)]
                ).rows
                guard let first = rows.first.flatMap({ PostgreSQLValues.integer($0[0]) }), let last = rows.last.flatMap({ PostgreSQLValues.integer($0[0]) })
                else { return .success([]) }
                var changes: [Int64: [[SQLServerValue]]] = [:]
                for change in try connection.query(
                    "SELECT token, entity, kind, attributes, pks FROM ambar_changes WHERE token BETWEEN $1 AND $2 ORDER BY token, position",
                    [.integer(first), .integer(last)]
                ).rows {
                    if let t = PostgreSQLValues.integer(change[0]) { changes[t, default: []].append(change) }
                }
                return .success(
                    rows.compactMap { row -> HistoryTransaction? in
                        guard let t = PostgreSQLValues.integer(row[0]) else { return nil }
                        var gathered = LedgerChanges(store: identifier)
                        for change in changes[t] ?? [] {
                            guard let entity = PostgreSQLValues.text(change[1]), let kind = PostgreSQLValues.integer(change[2]),
                                case .blob(let packed) = change[4]
                            else { continue }
                            gathered.add(entity: entity, kind: Int(kind), attributes: PostgreSQLValues.text(change[3]), packed: packed)
                        }
                        return HistoryTransaction(
                            token: t, timestamp: Date(timeIntervalSince1970: PostgreSQLValues.real(row[1]) ?? 0), author: PostgreSQLValues.text(row[2]),
                            processID: Int32(truncatingIfNeeded: PostgreSQLValues.integer(row[3]) ?? 0),
                            instanceID: PostgreSQLValues.integer(row[5]).map { UInt64(bitPattern: $0) }, contextName: PostgreSQLValues.text(row[4]),
                            inserted: gathered.inserted, updated: gathered.updated, deleted: gathered.deleted,
                            updatedProperties: gathered.updatedProperties)
                    })
            }
        }
        return try result.get()
    }

    func setHistoryCursor(_ consumer: String, token: Int64, lease: TimeInterval?) throws(AmbarError) {
        _ = try read(
            "set history cursor",
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

    func removeHistoryCursor(_ consumer: String) throws(AmbarError) {
        _ = try read("remove history cursor", "DELETE FROM ambar_cursors WHERE consumer = $1", [.text(consumer)])
    }

    /// Removes the ledger through `limit` and records it; inside the caller's transaction.
    private static func purge(_ connection: any SQLServerConnection, through limit: Int64) throws -> Int {
        _ = try connection.query("DELETE FROM ambar_changes WHERE token <= $1", [.integer(limit)])
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
