import AmbarStack
import Foundation
import XCTest

@testable import AmbarCore
@testable import AmbarSQL

/// The ledger's layout 2: one row per transaction with its changes in one value. Stores of
/// layout 1 (a row per entity and kind in `ambar_changes`) are upgraded in place with their
/// history intact, an older Ambar is refused by the upgraded store instead of reading
/// transactions without changes, and a value that cannot be read is an error, never an empty
/// transaction.
final class LedgerLayoutTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testTheEncodingKeepsEveryKindEntityPropertyAndKey() throws {
        let groups: [LedgerGroup: [Int64]] = [
            LedgerGroup(entity: "Employee", kind: .insert, properties: nil): [1, 2, 3, 4, 1_000_000, 5],
            LedgerGroup(entity: "Employee", kind: .update, properties: "name,salary"): [Int64.max, 7],
            LedgerGroup(entity: "Employee", kind: .update, properties: "email"): [8],
            LedgerGroup(entity: "Département", kind: .delete, properties: nil): [9, 2],
        ]
        var decoded: [LedgerGroup: [Int64]] = [:]
        try LedgerChangeEncoding.decode(LedgerChangeEncoding.encode(groups), location: "test") { entity, kind, names, keys in
            decoded[LedgerGroup(entity: entity, kind: kind, properties: kind == .update ? names.joined(separator: ",") : nil)] = keys
        }
        XCTAssertEqual(decoded, groups)
        let sequential = LedgerChangeEncoding.encode([LedgerGroup(entity: "E", kind: .insert, properties: nil): Array(1...5_000)])
        XCTAssertLessThan(sequential.count, 5_100, "consecutive keys take a byte each")
    }

    func testAValueThatCannotBeReadIsADamagedStoreNotAnEmptyTransaction() throws {
        _ = try seed("A")
        let location = "test"
        let cases: [([UInt8], String)] = [
            ([9, 0], "layout version 9"), ([1, 0, 5, 0x45], "ends inside a name"), ([1, 9], "unknown kind"),
            ([1, 3, 1, 0x45, 2, 0], "unknown kind"),  // a tombstone is only read in layout 2
            ([2, 3, 1, 0x45, 2, 2, 0x7b], "ends inside a name"), ([2, 3, 1, 0x45, 2, 1, 0x7b], "not valid JSON"),
        ]
        for (bytes, reason) in cases {
            XCTAssertThrowsError(try LedgerChangeEncoding.decode(Data(bytes), location: location) { _, _, _, _ in }) { error in
                guard case .storeDamaged(_, let message) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains(reason), message)
            }
        }
        // In the store, written by another program: reading the history says so.
        try rawExecute(
            backend == .sqlite
                ? "UPDATE ambar_transactions SET changes = x'0109' WHERE token = 1" : "UPDATE ambar_transactions SET changes = '\\x0109'::bytea WHERE token = 1"
        )
        assertThrows({ try coordinator.history(after: 0) }) {
            if case .storeDamaged = $0 { return true }
            return false
        }
    }

    func testALayout1StoreIsUpgradedInPlaceWithItsHistory() throws {
        let a = try seed("A")
        let context = privateContext("editor")
        try context.performAndWait {
            let employee = try XCTUnwrap(context.existingObject(with: a) as? Employee)
            employee.salary = 10
            employee.name = "A2"
            let b = try context.insert(Employee.self)
            b.name = "B"
            try context.save()
            try context.delete(employee)
            try context.save()
        }
        let before = try coordinator.history(after: 0)
        XCTAssertEqual(before.count, 3)
        coordinator = nil

        try downgradeToLayout1(before)
        XCTAssertEqual(try rawRows("SELECT count(*) FROM ambar_changes"), ["4"], "the layout-1 store holds a row per entity and kind")

        coordinator = try PersistentStoreCoordinator(model: model, store: try store())
        XCTAssertEqual(try coordinator.history(after: 0), before, "every transaction keeps its changes")
        XCTAssertEqual(try rawRows("SELECT value FROM ambar_metadata WHERE key = 'schema_version'"), ["2"])
        // New saves append one row each, and read back.
        let c = try seed("C")
        XCTAssertEqual(try coordinator.history(after: before.last!.token).first?.inserted, [c])

        // An Ambar of layout 1 is refused: it cannot read or write the change rows it expects.
        XCTAssertThrowsError(try rawRows("SELECT token, entity, kind, attributes, pks FROM ambar_changes")) { error in
            XCTAssertTrue("\(error)".contains(backend == .sqlite ? "ambar_ledger_layout_2_needs_a_newer_ambar" : "ledger layout 2"), "\(error)")
        }
        XCTAssertThrowsError(try rawExecute("INSERT INTO ambar_changes (token, entity, kind, attributes, pks) VALUES (9, 'Employee', 0, NULL, NULL)"))
        if backend == .sqlite {
            // What its opening runs: the index on a view fails, so it cannot even open the store.
            XCTAssertThrowsError(try rawExecute("CREATE INDEX IF NOT EXISTS ambar_changes_token ON ambar_changes (token)")) { error in
                XCTAssertTrue("\(error)".contains("views may not be indexed"), "\(error)")
            }
        }
    }

    func testTokensContinuePastAHistoryPurgedToTheHead() throws {
        for name in ["A", "B", "C"] { _ = try seed(name) }
        XCTAssertEqual(try coordinator.purgeHistory(through: 3, lease: 0), 3)
        XCTAssertEqual(try coordinator.historySummary().transactions, 0, "the purged head is not history")
        XCTAssertEqual(try coordinator.currentHistoryToken(), 3)
        let d = try seed("D")
        let history = try coordinator.history(after: 3)
        XCTAssertEqual(history.map(\.token), [4], "a token is never used twice")
        XCTAssertEqual(history.first?.inserted, [d])
        assertThrows({ try coordinator.history(after: 1) }) {
            if case .historyExpired = $0 { return true }
            return false
        }
    }

    func testAnAutoincrementLedgerPurgedToItsHeadKeepsItsHeadWhenUpgraded() throws {
        try XCTSkipIf(backend == .postgres, "PostgreSQL takes tokens from ambar_ledger_head, not from the table")
        for name in ["A", "B", "C"] { _ = try seed(name) }
        coordinator = nil
        // As layout 1 left a ledger purged through its head: AUTOINCREMENT's sequence at 3, no rows.
        try rawExecute(
            """
            CREATE TABLE ledger_copy (
                token INTEGER PRIMARY KEY AUTOINCREMENT, timestamp REAL NOT NULL, author TEXT,
                pid INTEGER NOT NULL, context_name TEXT, instance INTEGER, changes BLOB);
            INSERT INTO ledger_copy SELECT * FROM ambar_transactions;
            DROP TABLE ambar_transactions;
            ALTER TABLE ledger_copy RENAME TO ambar_transactions;
            DELETE FROM ambar_transactions;
            UPDATE ambar_metadata SET value = '3' WHERE key = 'history_purged_through';
            """)
        XCTAssertEqual(try rawRows("SELECT seq FROM sqlite_sequence WHERE name = 'ambar_transactions'"), ["3"])
        coordinator = try PersistentStoreCoordinator(model: model, store: try store())
        XCTAssertEqual(try coordinator.currentHistoryToken(), 3)
        _ = try seed("D")
        XCTAssertEqual(try coordinator.history(after: 3).map(\.token), [4])
        XCTAssertEqual(try rawRows("SELECT count(*) FROM sqlite_master WHERE sql LIKE '%AUTOINCREMENT%'"), ["0"])
    }

    func testTwoCoordinatorsSavingInTurnNeverShareAKey() throws {
        let other = try PersistentStoreCoordinator(model: model, store: try store())
        var ids: [ManagedObjectID] = []
        for round in 0..<40 {
            ids.append(try seed("N\(round)", on: round.isMultiple(of: 2) ? coordinator : other))
        }
        XCTAssertEqual(Set(ids.compactMap(\.primaryKey)).count, 40)
        XCTAssertEqual(try rawRows("SELECT count(*) FROM \"Employee\""), ["40"])
    }

    func testARowInsertedOutsideAmbarNeverTakesAKeyAmbarUsesNext() throws {
        // Departments have no uniqueness constraint: their inserts are not tried under a
        // savepoint that would recover from a taken key, so the key itself must be free.
        func department(_ name: String) throws -> ManagedObjectID {
            let context = privateContext("departments")
            return try context.performAndWait {
                let d = try context.insert(Department.self)
                d.name = name
                try context.save()
                return d.objectID
            }
        }
        let first = try department("A")
        // Another program inserts a row with the table's next key (SQLite's rowid, or the
        // sequence that is the column's default on PostgreSQL), past the keys Ambar reserved.
        try rawExecute(
            "INSERT INTO \"Department\" (Z_ENT, Z_OPT, \"name\") SELECT id, 1, 'outside' FROM ambar_entities WHERE name = 'Department'")
        let second = try department("B")
        let third = try department("C")
        XCTAssertEqual(Set([first, second, third].compactMap(\.primaryKey)).count, 3)
        XCTAssertEqual(try rawRows("SELECT count(DISTINCT Z_PK), count(*) FROM \"Department\""), ["4|4"])
    }

    func testKeysReservedByAFailedSaveAreNotUsedAfterItsRollback() throws {
        _ = try seed("A", email: "a@x")
        _ = try seed("B")
        // A save that fails in the store after taking its keys: a unique value is taken.
        let context = privateContext("failing")
        try context.performAndWait {
            let other = try context.insert(Employee.self)
            other.name = "fine"
            let duplicate = try context.insert(Employee.self)
            duplicate.name = "dup"
            duplicate.email = "a@x"
            XCTAssertThrowsError(try context.save())
            try context.rollback()
        }
        _ = try seed("C")
        if backend == .sqlite {
            // Every key in use is below what the allocator has handed out.
            let row = try rawRows("SELECT (SELECT max_pk FROM ambar_primarykeys WHERE root = 'Employee') >= (SELECT max(Z_PK) FROM \"Employee\")")
            XCTAssertEqual(row, ["1"])
        }
        XCTAssertEqual(try rawRows("SELECT count(DISTINCT Z_PK), count(*) FROM \"Employee\""), ["3|3"])
    }

    // MARK: Helpers

    private func seed(_ name: String, email: String? = nil, on coordinator: PersistentStoreCoordinator? = nil) throws -> ManagedObjectID {
        let context = privateContext("seed", on: coordinator)
        return try context.performAndWait {
            let e = try context.insert(Employee.self)
            e.name = name
            e.email = email
            try context.save()
            return e.objectID
        }
    }

    /// Rewrites the store's ledger as layout 1 left it, from `history`: change rows, no
    /// `changes` column, no view.
    private func downgradeToLayout1(_ history: [HistoryTransaction]) throws {
        var rows: [String] = []
        for transaction in history {
            var groups: [(entity: String, kind: Int, attributes: String?, keys: [Int64])] = []
            func add(_ ids: Set<ManagedObjectID>, _ kind: Int) {
                for (entity, members) in Dictionary(grouping: ids, by: \.entityName) {
                    if kind == 1 {
                        for (names, same) in Dictionary(grouping: members, by: { transaction.updatedProperties[$0]?.sorted().joined(separator: ",") ?? "" }) {
                            groups.append((entity, kind, names, same.compactMap(\.primaryKey).sorted()))
                        }
                    } else {
                        groups.append((entity, kind, nil, members.compactMap(\.primaryKey).sorted()))
                    }
                }
            }
            add(transaction.inserted, 0)
            add(transaction.updated, 1)
            add(transaction.deleted, 2)
            for (position, group) in groups.enumerated() {
                let hex = group.keys.map { key in
                    withUnsafeBytes(of: key.littleEndian) { $0.map { String(format: "%02x", $0) }.joined() }
                }.joined()
                let attributes = group.attributes.map { "'\($0)'" } ?? "NULL"
                let blob = backend == .sqlite ? "x'\(hex)'" : "'\\x\(hex)'::bytea"
                let positionValue = backend == .sqlite ? "" : "\(position), "
                rows.append("(\(transaction.token), \(positionValue)'\(group.entity)', \(group.kind), \(attributes), \(blob))")
            }
        }
        switch backend {
        case .sqlite:
            try rawExecute(
                """
                DROP VIEW ambar_changes;
                CREATE TABLE ambar_changes (token INTEGER NOT NULL, entity TEXT NOT NULL, kind INTEGER NOT NULL, attributes TEXT, pks BLOB NOT NULL);
                CREATE INDEX ambar_changes_token ON ambar_changes (token);
                INSERT INTO ambar_changes (token, entity, kind, attributes, pks) VALUES \(rows.joined(separator: ", "));
                ALTER TABLE ambar_transactions DROP COLUMN changes;
                UPDATE ambar_metadata SET value = '1' WHERE key = 'schema_version';
                """)
        case .postgres:
            try rawExecute(
                """
                DROP VIEW ambar_changes;
                CREATE TABLE ambar_changes (
                    token bigint NOT NULL, position integer NOT NULL, entity text NOT NULL, kind integer NOT NULL,
                    attributes text, pks bytea NOT NULL, PRIMARY KEY (token, position));
                INSERT INTO ambar_changes (token, position, entity, kind, attributes, pks) VALUES \(rows.joined(separator: ", "));
                ALTER TABLE ambar_transactions DROP COLUMN changes;
                UPDATE ambar_metadata SET value = '1' WHERE key = 'schema_version';
                """)
        }
    }
}
