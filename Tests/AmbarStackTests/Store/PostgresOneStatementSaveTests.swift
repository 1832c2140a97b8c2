import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

@testable import AmbarCore
@testable import AmbarPostgres

/// On a PostgreSQL server, a save that inserts and updates a few objects is one statement (its
/// rows, its ledger transaction and its NOTIFY): one round trip. An update whose row changed
/// since it was read, or that takes a unique value another row holds, makes that statement
/// write nothing, and the save runs again as a transaction that resolves it by the merge policy,
/// exactly as before.
final class PostgresOneStatementSaveTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private var server: PostgreSQLStore!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try postgreSQLStore("round trips")
    }

    /// Runs `body` on `context` and saves; returns how many statements the save sent.
    private func save(_ context: ManagedObjectContext, _ body: () throws -> Void) throws -> Int {
        try context.performAndWait { () throws -> Int in
            try body()
            let before = server.pool.statementsSent
            try context.save()
            return server.pool.statementsSent - before
        }
    }

    /// The stored name and version of `id`, read by another context.
    private func stored(_ id: ManagedObjectID) throws -> (name: String, email: String?, version: Int64) {
        let reader = privateContext("reader")
        return try reader.performAndWait { () throws in
            let employee = try XCTUnwrap(try reader.existingObject(with: id) as? Employee)
            return (employee.name, employee.email, employee.version)
        }
    }

    func testInsertingAndUpdatingAFewObjectsIsOneStatementEach() throws {
        let context = privateContext("writer")
        // The first insert also fills the key reserve: measured from the second on.
        _ = try save(context) {
            let first = try context.insert(Employee.self)
            first.name = "first"
        }
        var ada: Employee!
        XCTAssertEqual(
            try save(context) {
                ada = try context.insert(Employee.self)
                ada.name = "ada"
            }, 1, "an insert is one statement")
        let id = context.performAndWait { ada.objectID }
        let before = try coordinator.currentHistoryToken()
        XCTAssertEqual(try save(context) { ada.name = "ada lovelace" }, 1, "an update is one statement")
        XCTAssertEqual(
            try save(context) {
                ada.salary = 10
                let grace = try context.insert(Employee.self)
                grace.name = "grace"
            }, 1, "an update and an insert are one statement")
        let stored = try self.stored(id)
        XCTAssertEqual(stored.name, "ada lovelace")
        XCTAssertEqual(stored.version, 3, "inserted, then updated twice")
        let history = try coordinator.history(after: before)
        XCTAssertEqual(history.count, 2, "one ledger transaction per save")
        XCTAssertEqual(history.first?.updated, [id])
        XCTAssertEqual(history.first?.updatedProperties[id], ["name"])
    }

    func testAnUpdateOfARowChangedSinceItWasReadIsResolvedByTheMergePolicy() throws {
        let first = privateContext("first")
        var inserted: Employee!
        _ = try save(first) {
            inserted = try first.insert(Employee.self)
            inserted.name = "ada"
            inserted.salary = 1
        }
        let id = first.performAndWait { inserted.objectID }
        let second = privateContext("second")
        let mine = try second.performAndWait { try XCTUnwrap(try second.existingObject(with: id) as? Employee) }
        _ = second.performAndWait { mine.name }
        _ = try save(first) { try XCTUnwrap(try first.existingObject(with: id) as? Employee).salary = 2 }

        // The stale update: the one statement writes nothing, the transaction reports the conflict.
        second.mergePolicy = .error
        XCTAssertThrowsError(try save(second) { mine.name = "ada lovelace" }) { error in
            guard case AmbarError.mergeConflict = error else { return XCTFail("not a merge conflict: \(error)") }
        }
        XCTAssertEqual(try stored(id).name, "ada", "nothing of the refused save was written")
        XCTAssertEqual(try stored(id).version, 2)

        // With a merge policy, the transaction merges: this save's name, the other's salary.
        second.mergePolicy = .mergeByPropertyObjectTrump
        _ = try save(second) {}
        let reader = privateContext("check")
        try reader.performAndWait { () throws in
            let employee = try XCTUnwrap(try reader.existingObject(with: id) as? Employee)
            XCTAssertEqual(employee.name, "ada lovelace")
            XCTAssertEqual(employee.salary, 2)
            XCTAssertEqual(employee.version, 3)
        }
    }

    func testAnUpdateTakingAUniqueValueIsRefusedAndWritesNothing() throws {
        let context = privateContext("writer")
        var (a, b): (Employee?, Employee?) = (nil, nil)
        _ = try save(context) {
            a = try context.insert(Employee.self)
            a?.name = "a"
            a?.email = "a@example.com"
            b = try context.insert(Employee.self)
            b?.name = "b"
            b?.email = "b@example.com"
        }
        let id = try context.performAndWait { try XCTUnwrap(b?.objectID) }
        XCTAssertThrowsError(
            try save(context) {
                b?.name = "b renamed"
                b?.email = "a@example.com"
            }
        ) { error in
            guard case AmbarError.constraintViolation = error else { return XCTFail("not a uniqueness violation: \(error)") }
        }
        let stored = try self.stored(id)
        XCTAssertEqual(stored.name, "b", "nothing of the refused save was written")
        XCTAssertEqual(stored.email, "b@example.com")
        XCTAssertEqual(stored.version, 1)
    }
}
