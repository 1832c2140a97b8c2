import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite

/// The change ledger in SQLite: `ambar_transactions` (one row per committed save, its changes in
/// one value, ``LedgerChangeEncoding``) and `ambar_cursors` (durable consumers' and sharing
/// processes' positions).
extension SQLiteStore {
    /// Writes `entry` inside the current transaction and returns its token.
    func writeLedger(_ db: Database, _ entry: LedgerEntry) throws -> Int64? {
        guard !entry.isEmpty else {
            try SQLiteSchema.checkModelIsCurrent(db, model: model)
            return nil
        }
        // Bound straight into SQLite: this runs in every save. The row is written only while the
        // store's model hash (when it has one) is this store's model: the save's model check,
        // in its last statement rather than in one of its own before the writes (the
        // transaction is all or nothing, so the outcome is the same).
        let handle = try db.cachedStatement(
            sql: """
                INSERT INTO ambar_transactions (timestamp, author, pid, context_name, instance, changes)
                SELECT ?1, ?2, ?3, ?4, ?5, ?6
                WHERE coalesce((SELECT value FROM ambar_metadata WHERE key = 'model_hash'), ?7) = ?7
                """
        ).sqliteStatement
        defer { sqlite3_clear_bindings(handle) }
        sqlite3_reset(handle)
        sqlite3_bind_double(handle, 1, Date().timeIntervalSince1970)
        SQLiteValues.bind(entry.author.map { .string($0) } ?? .null, to: handle, at: 2)
        sqlite3_bind_int64(handle, 3, Int64(getpid()))
        SQLiteValues.bind(entry.contextName.map { .string($0) } ?? .null, to: handle, at: 4)
        sqlite3_bind_int64(handle, 5, ProcessInstance.storedID)
        SQLiteValues.bind(.data(try LedgerChangeEncoding.encode(entry)), to: handle, at: 6)
        SQLiteValues.bind(.string(model.versionHash), to: handle, at: 7)
        guard try SQLiteValues.stepInsert(handle, db) else {
            throw DatabaseError(resultCode: .SQLITE_CONSTRAINT, message: "the ledger refused a transaction row")
        }
        guard db.changesCount == 1 else {
            // No row: the store's model is another one (migrated since this store opened).
            try SQLiteSchema.checkModelIsCurrent(db, model: model)
            throw DatabaseError(resultCode: .SQLITE_ERROR, message: "the ledger's transaction row was not written, and the store's model is this one")
        }
        return db.lastInsertedRowID
    }

    package func savedToken(forIdempotencyKey key: String) throws(AmbarError) -> Int64? {
        try readOneStatement("read an idempotency receipt") { db in
            try Int64.fetchOne(db, sql: "SELECT token FROM ambar_receipts WHERE key = ?", arguments: [key])
        }
    }

    package func recordMarker(contextName: String) throws(AmbarError) -> Int64 {
        try write("record ledger marker") { db in
            try db.execute(
                sql: "INSERT INTO ambar_transactions (timestamp, author, pid, context_name, instance) VALUES (?, NULL, ?, ?, ?)",
                arguments: [Date().timeIntervalSince1970, Int64(getpid()), contextName, ProcessInstance.storedID])
            return db.lastInsertedRowID
        }
    }

    /// Purges the transactions after `purged` through `limit` and records the new purge point;
    /// returns how many were purged. The newest row always stays (at or below the purge point,
    /// nobody reads it): tokens are rowids, and the next one must stay past every token used.
    private static func removeTransactions(_ db: Database, after purged: Int64, through limit: Int64) throws -> Int {
        let removed =
            try Int.fetchOne(db, sql: "SELECT count(*) FROM ambar_transactions WHERE token > ? AND token <= ?", arguments: [purged, limit]) ?? 0
        try db.execute(
            sql: "DELETE FROM ambar_transactions WHERE token <= ? AND token < (SELECT max(token) FROM ambar_transactions)", arguments: [limit])
        try db.execute(sql: "UPDATE ambar_metadata SET value = ? WHERE key = 'history_purged_through'", arguments: [String(limit)])
        return removed
    }

    package func currentHistoryToken() throws(AmbarError) -> Int64 {
        try readOneStatement("read history token") { db in
            try SQLiteSchema.ledgerHead(db)
        }
    }

    private func purgedThrough(_ db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(sql: "SELECT value FROM ambar_metadata WHERE key = 'history_purged_through'")
        sqlite3_reset(statement.sqliteStatement)
        defer { sqlite3_reset(statement.sqliteStatement) }
        let code = sqlite3_step(statement.sqliteStatement)
        if code == SQLITE_DONE { return 0 }
        guard code == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        return Self.text(statement.sqliteStatement, 0).flatMap { Int64($0) } ?? 0
    }

    package func history(after token: Int64, limit: Int?) throws(AmbarError) -> [HistoryTransaction] {
        let result: Result<[HistoryTransaction], AmbarError> = try read("read history") { db in
            try transactions(db, after: token, limit: limit)
        }
        return try result.get()
    }

    /// The ledger page after `token` and the rows `select` names for it, in one read transaction
    /// on the ledger reader's own connection (for a store in memory, which no other process
    /// follows, through the pool).
    /// (`expecting` is not needed here: the page and its rows are read in one read transaction of
    /// this process, with no round trip between them.)
    package func ledgerPage(
        after token: Int64, limit: Int, expecting: Set<ManagedObjectID>, rowsOf select: ([HistoryTransaction]) -> Set<ManagedObjectID>?
    ) throws(AmbarError) -> LedgerPage {
        guard let ledgerReader else { return try ledgerPageInTwoReads(after: token, limit: limit, rowsOf: select) }
        let result: Result<LedgerPage, AmbarError>
        do {
            result = try ledgerReader.read { db in
                switch try transactions(db, after: token, limit: limit) {
                case .failure(let error): return .failure(error)
                case .success(let page):
                    return .success(LedgerPage(transactions: page, rows: try select(page).map { try rows(db, Array($0)) }))
                }
            }
        } catch {
            throw SQLiteValues.wrap(error, "read the ledger")
        }
        return try result.get()
    }

    /// The transactions after `token` (at most `limit`), read in the current transaction, or
    /// ``AmbarError/historyExpired(after:purgedThrough:)`` when they were purged. Columns are read
    /// by position, straight from the statement.
    private func transactions(_ db: Database, after token: Int64, limit: Int?) throws -> Result<[HistoryTransaction], AmbarError> {
        let purged = try purgedThrough(db)
        if token < purged { return .failure(.historyExpired(after: token, purgedThrough: purged)) }
        let statement = try db.cachedStatement(
            sql: "SELECT token, timestamp, author, pid, context_name, instance, changes FROM ambar_transactions WHERE token > ? ORDER BY token LIMIT ?")
        let sqlite = statement.sqliteStatement
        sqlite3_reset(sqlite)
        sqlite3_bind_int64(sqlite, 1, token)
        sqlite3_bind_int64(sqlite, 2, Int64(limit ?? -1))
        var page: [HistoryTransaction] = []
        while true {
            let code = sqlite3_step(sqlite)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            var gathered = LedgerChanges(store: identifier)
            if sqlite3_column_type(sqlite, 6) != SQLITE_NULL, let bytes = sqlite3_column_blob(sqlite, 6) {
                try gathered.add(encodedBytes: UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(sqlite, 6))), location: location)
            }
            page.append(
                HistoryTransaction(
                    token: sqlite3_column_int64(sqlite, 0), timestamp: Date(timeIntervalSince1970: sqlite3_column_double(sqlite, 1)),
                    author: Self.text(sqlite, 2), processID: Int32(truncatingIfNeeded: sqlite3_column_int64(sqlite, 3)),
                    instanceID: sqlite3_column_type(sqlite, 5) == SQLITE_NULL ? nil : UInt64(bitPattern: sqlite3_column_int64(sqlite, 5)),
                    contextName: Self.text(sqlite, 4),
                    inserted: gathered.inserted, updated: gathered.updated, deleted: gathered.deleted, updatedProperties: gathered.updatedProperties,
                    tombstones: gathered.tombstones))
        }
        sqlite3_reset(sqlite)
        return .success(page)
    }

    /// A text column, or nil when NULL.
    private static func text(_ statement: SQLiteStatement, _ column: Int32) -> String? {
        guard sqlite3_column_type(statement, column) != SQLITE_NULL, let text = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: text)
    }

    @discardableResult
    package func setHistoryCursor(_ consumer: String, token: Int64, lease: TimeInterval?, lockWait: TimeInterval?) throws(AmbarError) -> Bool {
        try unlessBusy(lockWait) { () throws(AmbarError) in
            try write("set history cursor", lockWait: lockWait) { db in
                try db.execute(
                    sql: """
                        INSERT INTO ambar_cursors (consumer, token, last_seen, lease) VALUES (?, ?, ?, ?)
                        ON CONFLICT(consumer) DO UPDATE SET token = excluded.token, last_seen = excluded.last_seen, lease = excluded.lease
                        """, arguments: [consumer, token, Date().timeIntervalSince1970, lease])
            }
        }
    }

    package func historyCursors() throws(AmbarError) -> [HistoryCursor] {
        try readOneStatement("read history cursors") { db in
            try Row.fetchAll(db, sql: "SELECT consumer, token, last_seen, lease FROM ambar_cursors ORDER BY consumer").map {
                HistoryCursor(consumer: $0["consumer"], token: $0["token"], lastSeen: Date(timeIntervalSince1970: $0["last_seen"]), lease: $0["lease"])
            }
        }
    }

    @discardableResult
    package func removeHistoryCursor(_ consumer: String, lockWait: TimeInterval?) throws(AmbarError) -> Bool {
        try unlessBusy(lockWait) { () throws(AmbarError) in
            try write("remove history cursor", lockWait: lockWait) { db in
                try db.execute(sql: "DELETE FROM ambar_cursors WHERE consumer = ?", arguments: [consumer])
            }
        }
    }

    /// Runs `write` and returns true; with a bounded `lockWait`, returns false instead when the
    /// write lock was not free in time (SQLITE_BUSY: nothing was written).
    private func unlessBusy(_ lockWait: TimeInterval?, _ write: () throws(AmbarError) -> Void) throws(AmbarError) -> Bool {
        do {
            try write()
            return true
        } catch .storage(_, let code, _, _) where lockWait != nil && code & 0xFF == SQLITE_BUSY {
            return false
        }
    }

    package func purgeHistory(through token: Int64, lease: TimeInterval) throws(AmbarError) -> Int64 {
        try write("purge history") { db in
            let oldestLive = try Int64.fetchOne(
                db, sql: "SELECT min(token) FROM ambar_cursors WHERE last_seen >= ? - min(coalesce(lease, ?), ?)",
                arguments: [Date().timeIntervalSince1970, lease, lease])
            let limit = min(token, oldestLive ?? token)
            let purged = try purgedThrough(db)
            guard limit > purged else { return purged }
            _ = try Self.removeTransactions(db, after: purged, through: limit)
            return limit
        }
    }

    package func purgeHistory(_ retention: HistoryRetention, now: Date) throws(AmbarError) -> HistoryPurge {
        try write("purge history") { db in
            let time = now.timeIntervalSince1970
            // A position recorded by a clock ahead of this one counts as seen now: it then ages by
            // this clock, instead of holding history back for as long as that clock is ahead (a
            // crashed process whose clock was a year ahead would stop purging for a year).
            try db.execute(sql: "UPDATE ambar_cursors SET last_seen = ? WHERE last_seen > ?", arguments: [time, time])
            // Sharing processes' merge positions go when their lease ran out; durable consumers'
            // stay, but hold history back only within the consumer lease.
            try db.execute(
                sql: "DELETE FROM ambar_cursors WHERE lease IS NOT NULL AND last_seen < ? - min(lease, ?)", arguments: [time, retention.consumerLease])
            let cursorsRemoved = db.changesCount
            try db.execute(sql: "DELETE FROM ambar_receipts WHERE saved < ?", arguments: [time - retention.receipts])
            let receiptsRemoved = db.changesCount
            let purged = try purgedThrough(db)
            // What is old is told by the purging process's own clock, never by the timestamps
            // writers put in their transactions (a writer whose clock is wrong would otherwise
            // stop purging, or make it early): each purge notes the head it saw and when (a
            // ledger mark, only when the head moved), and removes what was already committed at
            // the newest mark that is older than the history retention.
            let head = try SQLiteSchema.ledgerHead(db)
            let lastMarked = try Int64.fetchOne(db, sql: "SELECT head FROM ambar_ledger_marks ORDER BY rowid DESC LIMIT 1")
            let marked = head != (lastMarked ?? 0)
            if marked { try db.execute(sql: "INSERT INTO ambar_ledger_marks (at, head) VALUES (?, ?)", arguments: [time, head]) }
            let cutoff = time - retention.history
            var limit = try Int64.fetchOne(db, sql: "SELECT max(head) FROM ambar_ledger_marks WHERE at <= ?", arguments: [cutoff]) ?? purged
            // Marks older than the one just used will never be needed again.
            try db.execute(sql: "DELETE FROM ambar_ledger_marks WHERE at < (SELECT max(at) FROM ambar_ledger_marks WHERE at <= ?)", arguments: [cutoff])
            if let oldestLive = try Int64.fetchOne(
                db, sql: "SELECT min(token) FROM ambar_cursors WHERE lease IS NOT NULL OR last_seen >= ?", arguments: [time - retention.consumerLease])
            {
                limit = min(limit, oldestLive)
            }
            var removed = 0
            if limit > purged { removed = try Self.removeTransactions(db, after: purged, through: limit) }
            if marked || removed + cursorsRemoved + receiptsRemoved > 0 {
                // Counted in the same transaction: processes watching the file for writes made
                // outside Ambar see the count move and know this write was Ambar's. (Not a ledger
                // marker: markers would age and be purged in turn, so an idle store would never
                // stop changing.)
                try db.execute(
                    sql: """
                        INSERT INTO ambar_metadata (key, value) VALUES ('purge_count', '1')
                        ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
                        """)
            }
            return HistoryPurge(
                purgedThrough: max(limit, purged), transactionsRemoved: removed, cursorsRemoved: cursorsRemoved, receiptsRemoved: receiptsRemoved)
        }
    }

    package func historySummary() throws(AmbarError) -> HistorySummary {
        try read("summarise history") { db in
            let purged = try purgedThrough(db)
            let row = try Row.fetchOne(db, sql: "SELECT min(token) AS oldest, count(*) AS count FROM ambar_transactions WHERE token > ?", arguments: [purged])
            return HistorySummary(
                oldestToken: row?["oldest"], headToken: try SQLiteSchema.ledgerHead(db),
                transactions: row?["count"] ?? 0, purgedThrough: purged,
                purges: Int(try String.fetchOne(db, sql: "SELECT value FROM ambar_metadata WHERE key = 'purge_count'") ?? "0") ?? 0)
        }
    }
}
