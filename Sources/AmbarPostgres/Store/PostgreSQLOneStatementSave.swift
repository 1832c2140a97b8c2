import AmbarCore
import AmbarSQL
import Foundation

/// A save that inserts and updates rows, sent as one statement: its rows and its ledger
/// transaction as common table expressions of one `WITH … SELECT`, which PostgreSQL runs and
/// commits on its own (no BEGIN, no COMMIT: one round trip where a transaction takes four).
///
/// ``SaveWork`` runs over it as over any backend, with the writes kept instead of sent. The save
/// leaves this path — nothing having been written — when it needs anything the statement cannot
/// hold: a read (a uniqueness lookup, a row for a merge policy), a delete, a join or order row, a
/// receipt or a consumer's move, more rows than ``rowLimit`` or more updates than
/// ``updateLimit``. The statement itself refuses (a division by zero: PostgreSQL undoes all of
/// it) when a row was not written: an insert whose unique value was taken (`ON CONFLICT DO
/// NOTHING` skipped it), an update whose row another save changed or deleted since it was read
/// (its version did not match); and it fails as a whole when an update would take a unique value
/// another row holds, or when another process migrated the model meanwhile. Either way the save
/// then runs again as a transaction, which resolves the conflict by the merge policy or reports
/// the migration exactly as it always does.
final class PostgreSQLOneStatementSave: SaveTransaction {
    /// The save needs what one statement cannot hold: it runs as a transaction.
    struct NotOneStatement: Error {}

    /// PostgreSQL's bound on a statement's parameters is 65,535; the ledger takes 10.
    static let parameterLimit = 30_000
    /// Rows one statement inserts at most: a larger save runs as a transaction, whose statements
    /// the server can report on one by one.
    static let rowLimit = 50_000
    /// Updates one statement holds at most: each is a statement of its own inside it, so a bulk
    /// update runs as a transaction (whose text stays short), and an interactive save — a few
    /// objects edited — is one round trip.
    static let updateLimit = 16

    let store: PostgreSQLStore
    let connection: any SQLServerConnection
    private var writes: [String] = []
    private var parameters: [SQLServerValue] = []
    private var rowCount = 0
    private var updateCount = 0
    private var entry: LedgerEntry?

    init(store: PostgreSQLStore, connection: any SQLServerConnection) {
        self.store = store
        self.connection = connection
    }

    /// Whether `changes` may take this path at all (what it cannot hold, known before it starts).
    static func mayHold(_ changes: ChangeSet) -> Bool {
        !(changes.inserts.isEmpty && changes.updates.isEmpty) && changes.updates.count <= updateLimit && changes.deletes.isEmpty
            && changes.joins.isEmpty && changes.orders.isEmpty && changes.idempotencyKey == nil && changes.consumerMove == nil
    }

    /// Runs the kept writes and the ledger as one statement; returns the token. Throws
    /// ``NotOneStatement`` when the statement refused (nothing was written).
    func commit() throws -> Int64 {
        guard let entry, !writes.isEmpty else { throw NotOneStatement() }
        // The count is a parameter, not a literal: the text stays the same for any number of rows.
        let written = (0..<writes.count).map { "(SELECT count(*) FROM w\($0))" }.joined(separator: " + ")
        let counted = parameters + [.integer(Int64(rowCount))]
        let ledger = try store.ledgerStatement(
            author: entry.author, contextName: entry.contextName, entry: entry, writes: writes.enumerated().map { "w\($0) AS (\($1) RETURNING 1)" },
            refusingUnless: "\(written) = $\(counted.count)::bigint", firstParameter: counted.count + 1)
        do {
            return try store.ledgerToken(connection.queryRecurring(ledger.sql, counted + ledger.parameters).first)
        } catch let error as SQLServerError
            where error.sqlState == "22012" || error.isUniqueViolation || PostgreSQLStore.retriedStates.contains(error.sqlState ?? "")
        {
            // A row not written (the refusal), an update taking a unique value another row holds,
            // or a deadlock or serialization failure the server ended this statement for:
            // nothing was written, and the transaction resolves it (and runs again after those).
            throw NotOneStatement()
        } catch let error as SQLServerError where error.connectionLost {
            // The statement may have committed before the connection was lost: it must never
            // run again (the pool runs a body again when an idle connection fails at once).
            throw ServerConnectionPool.map(error, operation: "save", location: store.location)
        }
    }

    // MARK: SaveTransaction

    var storeIdentifier: String { store.identifier }
    var entityIDs: [String: Int64] { store.entityIDs }

    func receiptToken(_ key: String) throws -> Int64? { throw NotOneStatement() }

    func allocate(root: String, count: Int) throws -> [Int64] {
        try store.reservedKeys(connection, root: root, count: count)
    }

    func rows(_ rootLayout: EntityLayout, columns: [String], matching keys: [[StoredScalar]]) throws -> [StoreRow] { throw NotOneStatement() }
    func currentRow(_ layout: EntityLayout, primaryKey: Int64) throws -> StoreRow? { throw NotOneStatement() }
    func existingPrimaryKeys(root: String, _ primaryKeys: [Int64]) throws -> Set<Int64> { throw NotOneStatement() }
    func deleteRow(root: String, primaryKey: Int64, expectedVersion: Int64?) throws -> Bool { throw NotOneStatement() }
    func deleteJoinRows(table: String, column: String, primaryKey: Int64) throws { throw NotOneStatement() }

    /// Keeps the update; says it was written: the statement refuses as a whole when it was not
    /// (its row changed or gone since it was read), and the transaction then sees the conflict.
    func updateRow(root: String, primaryKey: Int64, version: Int64, assignments: [(column: String, value: StoredScalar)], expectedVersion: Int64?) throws
        -> Bool
    {
        guard updateCount < Self.updateLimit, rowCount < Self.rowLimit else { throw NotOneStatement() }
        let (sql, values) = store.updateStatement(
            root: root, primaryKey: primaryKey, version: version, assignments: assignments, expectedVersion: expectedVersion,
            firstParameter: parameters.count + 1)
        guard parameters.count + values.count <= Self.parameterLimit else { throw NotOneStatement() }
        writes.append(sql)
        parameters += values
        rowCount += 1
        updateCount += 1
        return true
    }

    func insertRows(_ layout: EntityLayout, _ rows: [NewRow]) throws {
        guard !rows.isEmpty else { return }
        guard rowCount + rows.count <= Self.rowLimit,
            let inserts = store.insertStatements(layout, rows[...], firstParameter: parameters.count + 1, numberedOnward: true)
        else { throw NotOneStatement() }
        for insert in inserts {
            writes.append(insert.sql)
            parameters += insert.parameters
        }
        guard parameters.count <= Self.parameterLimit else { throw NotOneStatement() }
        rowCount += rows.count
    }

    func joinRows(table: String, ownColumn: String, otherColumn: String, owners: [Int64]) throws -> [JoinPair] { throw NotOneStatement() }
    func setJoinRow(table: String, source: Int64, destination: Int64, present: Bool) throws { throw NotOneStatement() }
    func setOrder(_ mapping: RelationshipMapping, column: String, owner: Int64, destination: Int64, position: Int) throws { throw NotOneStatement() }

    /// Kept for ``commit()``, which knows the token.
    func writeLedger(_ entry: LedgerEntry) throws -> Int64? {
        guard !entry.isEmpty else { throw NotOneStatement() }
        self.entry = entry
        return nil
    }

    func writeReceipt(_ key: String, token: Int64) throws { throw NotOneStatement() }
    func moveConsumer(_ move: ConsumerMove) throws { throw NotOneStatement() }
    func writeOutbox(_ move: ConsumerMove) throws { throw NotOneStatement() }

    /// Every insert is tried as is: the statement refuses a row whose unique value is taken.
    var optimisticInsertMinimum: Int { 1 }
    /// Nothing to mark: the statement is all or nothing.
    func execute(_ step: SavepointStep) throws {}
}
