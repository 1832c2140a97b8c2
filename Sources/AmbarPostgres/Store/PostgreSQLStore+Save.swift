import AmbarCore
import AmbarSQL
import Foundation

extension PostgreSQLStore {
    /// Applies a change set by the rules of ``SaveWork``: as one statement when it only inserts
    /// (``PostgreSQLOneStatementSave``), else — or when that statement refuses — in one
    /// transaction.
    ///
    /// The store's model is checked by the save's last statement (the ledger's). A store
    /// migrated meanwhile whose tables refuse this model's statements (a uniqueness constraint
    /// added) fails before it: the save then throws ``AmbarError/storeMigrated(storeHash:modelHash:)``
    /// rather than what the statement met.
    func save(_ changes: ChangeSet) throws(AmbarError) -> SaveOutcome {
        do {
            return try applySave(changes)
        } catch {
            if case .storeMigrated = error { throw error }
            if let migrated = migratedMeanwhile() { throw migrated }
            throw error
        }
    }

    /// ``AmbarError/storeMigrated(storeHash:modelHash:)`` when the store's model is no longer
    /// this store's, read on a connection of its own; `nil` when it is, or cannot be read (the
    /// error at hand says more then).
    private func migratedMeanwhile() -> AmbarError? {
        do {
            try pool.withConnection("check the store's model") { connection in try checkModelIsCurrent(connection) }
            return nil
        } catch {
            if case .storeMigrated = error { return error }
            return nil
        }
    }

    private func applySave(_ changes: ChangeSet) throws(AmbarError) -> SaveOutcome {
        if PostgreSQLOneStatementSave.mayHold(changes) {
            let outcome: SaveOutcome? = try pool.withConnection("save") { connection in
                let attempt = PostgreSQLOneStatementSave(store: self, connection: connection)
                do {
                    var outcome = try SaveWork.perform(model: model, transaction: attempt, changes: changes)
                    outcome.token = try attempt.commit()
                    return outcome
                } catch is PostgreSQLOneStatementSave.NotOneStatement {
                    return nil
                }
            }
            if let outcome { return outcome }
        }
        return try write("save") { connection in
            try SaveWork.perform(model: model, transaction: PostgreSQLSaveTransaction(store: self, connection: connection), changes: changes)
        }
    }

    /// `$first…` placeholders, each cast to its column's type.
    func placeholders(root: String, columns: [String], from first: Int) -> [String] {
        columns.enumerated().map { i, column in
            "$\(first + i)" + (columnTypes[root]?[column].map(PostgreSQLValues.cast) ?? "")
        }
    }

    /// A row's update: `UPDATE root SET Z_OPT = version, <column> = value, … WHERE Z_PK = key`,
    /// with `AND Z_OPT = expectedVersion` when one is given, its parameters numbered from `first`.
    func updateStatement(
        root: String, primaryKey: Int64, version: Int64, assignments: [(column: String, value: StoredScalar)], expectedVersion: Int64?,
        firstParameter first: Int
    ) -> (sql: String, parameters: [SQLServerValue]) {
        let columns = assignments.map(\.column)
        var sql = "UPDATE \(quoted(root)) SET Z_OPT = $\(first)"
        for (column, placeholder) in zip(columns, placeholders(root: root, columns: columns, from: first + 1)) {
            sql += ", \(quoted(column)) = \(placeholder)"
        }
        var parameters: [SQLServerValue] = [.integer(version)] + assignments.map { PostgreSQLValues.serverValue($0.value) }
        parameters.append(.integer(primaryKey))
        sql += " WHERE Z_PK = $\(first + parameters.count - 1)"
        if let expectedVersion {
            parameters.append(.integer(expectedVersion))
            sql += " AND Z_OPT = $\(first + parameters.count - 1)"
        }
        return (sql, parameters)
    }

    /// `count` keys of `root` from the store's reserve, refilled from the sequence on `connection`
    /// when it runs dry.
    func reservedKeys(_ connection: any SQLServerConnection, root: String, count: Int) throws -> [Int64] {
        try keyReserve.keys(root: root, count: count) { n in
            try connection.queryRecurring("SELECT nextval('\(PostgreSQLSchema.sequence(of: root))') FROM generate_series(1, $1)", [.integer(Int64(n))])
                .compactMap { PostgreSQLValues.integer($0[0]) }
        }
    }
}

/// A save's statements on a PostgreSQL connection inside its transaction.
///
/// A statement the server refuses aborts the whole transaction, so nothing here may fail on
/// purpose: inserts use `ON CONFLICT DO NOTHING` and compare what was written; an update that may
/// hit a uniqueness constraint runs under a savepoint, so the save can still name the holder.
/// The ledger's statement, the save's last, checks the store's model, which spares a round trip.
/// (Ambar's connections mark their sessions as Ambar's when they open, so the save's writes are
/// not reported as foreign.)
struct PostgreSQLSaveTransaction: SaveTransaction {
    let store: PostgreSQLStore
    let connection: any SQLServerConnection

    var storeIdentifier: String { store.identifier }
    var entityIDs: [String: Int64] { store.entityIDs }

    /// A savepoint costs two round trips, a lookup of holders one per 500 keys: the attempt pays
    /// from a thousand inserts.
    var optimisticInsertMinimum: Int { 1_000 }

    func execute(_ step: SavepointStep) throws {
        _ = try connection.query(step.rawValue, [])
    }

    func receiptToken(_ key: String) throws -> Int64? {
        try connection.query("SELECT token FROM ambar_receipts WHERE key = $1", [.text(key)]).rows.first.flatMap { PostgreSQLValues.integer($0[0]) }
    }

    func allocate(root: String, count: Int) throws -> [Int64] {
        try store.reservedKeys(connection, root: root, count: count)
    }

    func rows(_ rootLayout: EntityLayout, columns: [String], matching keys: [[StoredScalar]]) throws -> [StoreRow] {
        let spec = try store.spec(for: rootLayout)
        let root = rootLayout.rootName
        var result: [StoreRow] = []
        if columns.count == 1 {
            for start in stride(from: 0, to: keys.count, by: 500) {
                let chunk = Array(keys[start..<min(start + 500, keys.count)])
                let list = store.placeholders(root: root, columns: Array(repeating: columns[0], count: chunk.count), from: 1).joined(separator: ", ")
                let rows = try connection.query(
                    "SELECT \(spec.selectListT0) FROM \(quoted(root)) AS t0 WHERE t0.\(quoted(columns[0])) IN (\(list))",
                    chunk.map { PostgreSQLValues.serverValue($0[0]) })
                result += rows.rows.compactMap { store.readRow($0, spec) }
            }
        } else {
            let condition = zip(columns, store.placeholders(root: root, columns: columns, from: 1)).map { "t0.\(quoted($0)) = \($1)" }.joined(
                separator: " AND ")
            for key in keys {
                let rows = try connection.query(
                    "SELECT \(spec.selectListT0) FROM \(quoted(root)) AS t0 WHERE \(condition) LIMIT 1", key.map(PostgreSQLValues.serverValue))
                result += rows.rows.compactMap { store.readRow($0, spec) }
            }
        }
        return result
    }

    func currentRow(_ layout: EntityLayout, primaryKey: Int64) throws -> StoreRow? {
        let spec = try store.spec(for: layout)
        return try connection.query("SELECT \(spec.selectListT0) FROM \(quoted(layout.rootName)) AS t0 WHERE t0.Z_PK = $1", [.integer(primaryKey)])
            .rows.first.flatMap { store.readRow($0, spec) }
    }

    /// `FOR KEY SHARE`: a concurrent delete of these rows waits until this transaction ends.
    func existingPrimaryKeys(root: String, _ primaryKeys: [Int64]) throws -> Set<Int64> {
        Set(
            try connection.query("SELECT Z_PK FROM \(quoted(root)) WHERE Z_PK = ANY($1::bigint[]) FOR KEY SHARE", [.integerArray(primaryKeys)]).rows
                .compactMap { PostgreSQLValues.integer($0[0]) })
    }

    func deleteRow(root: String, primaryKey: Int64, expectedVersion: Int64?) throws -> Bool {
        if let expectedVersion {
            return try connection.query("DELETE FROM \(quoted(root)) WHERE Z_PK = $1 AND Z_OPT = $2", [.integer(primaryKey), .integer(expectedVersion)])
                .affectedRows > 0
        }
        return try connection.query("DELETE FROM \(quoted(root)) WHERE Z_PK = $1", [.integer(primaryKey)]).affectedRows > 0
    }

    func deleteJoinRows(table: String, column: String, primaryKey: Int64) throws {
        _ = try connection.query("DELETE FROM \(quoted(table)) WHERE \(column) = $1", [.integer(primaryKey)])
    }

    func updateRow(root: String, primaryKey: Int64, version: Int64, assignments: [(column: String, value: StoredScalar)], expectedVersion: Int64?) throws
        -> Bool
    {
        let (sql, parameters) = store.updateStatement(
            root: root, primaryKey: primaryKey, version: version, assignments: assignments, expectedVersion: expectedVersion, firstParameter: 1)
        let unique = Set((store.model.resolved.rootUniqueness[root] ?? []).flatMap { $0 })
        guard assignments.contains(where: { unique.contains($0.column) }) else {
            return try connection.query(sql, parameters).affectedRows > 0
        }
        _ = try connection.query("SAVEPOINT ambar_update", [])
        let outcome: Result<SQLServerResult, SQLServerError>
        do { outcome = .success(try connection.query(sql, parameters)) } catch { outcome = .failure(error) }
        switch outcome {
        case .success(let result):
            _ = try connection.query("RELEASE SAVEPOINT ambar_update", [])
            return result.affectedRows > 0
        case .failure(let error) where error.isUniqueViolation:
            _ = try connection.query("ROLLBACK TO SAVEPOINT ambar_update", [])
            throw ConstraintRefusal()
        case .failure(let error):
            throw error
        }
    }

    func insertRows(_ layout: EntityLayout, _ rows: [NewRow]) throws {
        guard !rows.isEmpty else { return }
        guard let inserts = store.insertStatements(layout, rows[...], firstParameter: 1, numberedOnward: false) else {
            throw AmbarError.unknownEntity(layout.name)
        }
        for insert in inserts {
            // The count of rows written says whether any was refused; only then are the keys
            // written read back (the keys are new, so those present are the ones this wrote).
            let written: Int
            if insert.isArrays {
                let counted = try connection.queryRecurring("WITH w AS (\(insert.sql) RETURNING 1) SELECT count(*) FROM w", insert.parameters)
                written = counted.first.flatMap { PostgreSQLValues.integer($0[0]) }.map(Int.init) ?? 0
            } else {
                written = try connection.query(insert.sql, insert.parameters).affectedRows
            }
            if written < insert.rows.count {
                let present = try connection.query(
                    "SELECT Z_PK FROM \(quoted(layout.rootName)) WHERE Z_PK = ANY($1::bigint[])", [.integerArray(insert.rows.map(\.primaryKey))])
                let keys = Set(present.rows.compactMap { PostgreSQLValues.integer($0[0]) })
                let refused = insert.rows.first { !keys.contains($0.primaryKey) }
                throw ConstraintRefusal(values: refused?.values ?? .none, toOne: refused?.toOne ?? [])
            }
        }
    }

    func joinRows(table: String, ownColumn: String, otherColumn: String, owners: [Int64]) throws -> [JoinPair] {
        try connection.query(
            "SELECT \(ownColumn), \(otherColumn) FROM \(quoted(table)) WHERE \(ownColumn) = ANY($1::bigint[])", [.integerArray(owners)]
        ).rows.compactMap { row in
            guard let owner = PostgreSQLValues.integer(row[0]), let destination = PostgreSQLValues.integer(row[1]) else { return nil }
            return JoinPair(owner: owner, destination: destination)
        }
    }

    func setJoinRow(table: String, source: Int64, destination: Int64, present: Bool) throws {
        if present {
            _ = try connection.query(
                "INSERT INTO \(quoted(table)) (src, dst) VALUES ($1, $2) ON CONFLICT DO NOTHING", [.integer(source), .integer(destination)])
        } else {
            _ = try connection.query("DELETE FROM \(quoted(table)) WHERE src = $1 AND dst = $2", [.integer(source), .integer(destination)])
        }
    }

    func setOrder(_ mapping: RelationshipMapping, column: String, owner: Int64, destination: Int64, position: Int) throws {
        switch mapping {
        case .inverseForeignKey(let root, let foreignKey):
            _ = try connection.query(
                "UPDATE \(quoted(root)) SET \(quoted(column)) = $1 WHERE Z_PK = $2 AND \(quoted(foreignKey)) = $3",
                [.integer(Int64(position)), .integer(destination), .integer(owner)])
        case .joinTable(let table, let own, let other):
            _ = try connection.query(
                "UPDATE \(quoted(table)) SET \(quoted(column)) = $1 WHERE \(own) = $2 AND \(other) = $3",
                [.integer(Int64(position)), .integer(owner), .integer(destination)])
        case .foreignKey, .transient:
            break
        }
    }

    func writeLedger(_ entry: LedgerEntry) throws -> Int64? {
        try store.writeLedger(connection, entry)
    }

    func writeReceipt(_ key: String, token: Int64) throws {
        // A concurrent save with the same key committed first: this one is refused (and rolled back).
        let written = try connection.query(
            "INSERT INTO ambar_receipts (key, token, saved) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            [.text(key), .integer(token), .real(Date().timeIntervalSince1970)])
        if written.affectedRows == 0 {
            throw AmbarError.alreadySaved(idempotencyKey: key, token: try receiptToken(key) ?? 0)
        }
    }

    func moveConsumer(_ move: ConsumerMove) throws {
        let now = Date().timeIntervalSince1970
        if let fence = move.fence {
            // FOR SHARE holds the ownership row until this transaction ends: a copy taking the
            // consumer over waits for this save, which commits under the epoch it was fenced by.
            let row = try connection.query("SELECT owner, epoch FROM ambar_consumer_owners WHERE consumer = $1 FOR SHARE", [.text(move.consumer)]).rows.first
            let owner = row.flatMap { PostgreSQLValues.text($0[0]) }
            guard owner == fence.owner.id, row.flatMap({ PostgreSQLValues.integer($0[1]) }) == fence.epoch else {
                throw AmbarError.consumerLeaseLost(consumer: move.consumer, holder: owner.map { ConsumerOwner(id: $0).map(\.description) ?? $0 })
            }
        }
        // Under READ COMMITTED a concurrent move of the same row waits for the first one to commit
        // and then finds the token changed: exactly one of them moves it.
        let written: Int
        if let expected = move.expected {
            written = try connection.query(
                "UPDATE ambar_cursors SET token = $1, last_seen = $2, lease = NULL WHERE consumer = $3 AND token = $4 AND lease IS NULL",
                [.integer(move.token), .real(now), .text(move.consumer), .integer(expected)]
            ).affectedRows
        } else {
            written = try connection.query(
                "INSERT INTO ambar_cursors (consumer, token, last_seen, lease) VALUES ($1, $2, $3, NULL) ON CONFLICT (consumer) DO NOTHING",
                [.text(move.consumer), .integer(move.token), .real(now)]
            ).affectedRows
        }
        guard written == 0 else { return }
        let row = try connection.query("SELECT token, lease FROM ambar_cursors WHERE consumer = $1", [.text(move.consumer)]).rows.first
        if let lease = row.flatMap({ PostgreSQLValues.real($0[1]) }) {
            throw AmbarError.consumerNameTaken(consumer: move.consumer, lease: lease)
        }
        throw AmbarError.consumerPositionMoved(consumer: move.consumer, expected: move.expected, found: row.flatMap { PostgreSQLValues.integer($0[0]) })
    }

    func writeOutbox(_ move: ConsumerMove) throws {
        let now = Date().timeIntervalSince1970
        for (index, message) in move.outbox.enumerated() {
            let key = message.key(in: move, index: index)
            let written = try connection.query(
                """
                INSERT INTO ambar_outbox (consumer, key, topic, payload, token, recorded, attempts, not_before)
                VALUES ($1, $2, $3, $4, $5, $6, 0, 0) ON CONFLICT (key) DO NOTHING
                """, [.text(move.consumer), .text(key), .text(message.topic), .blob(message.payload), .integer(move.token), .real(now)]
            ).affectedRows
            guard written > 0 else { throw AmbarError.outboxKeyTaken(key: key) }
        }
    }
}
