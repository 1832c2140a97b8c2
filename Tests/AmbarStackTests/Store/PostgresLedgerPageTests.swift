import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

@testable import AmbarCore
@testable import AmbarPostgres

/// A sharing process reads a page of the ledger and the rows its transactions changed. On a
/// PostgreSQL server, the rows a doorbell named are read in the page's own statement: one round
/// trip (counted by the store's connection pool) instead of two; what the ledger names beyond
/// them is read after, and rows of objects it does not name are left out.
final class PostgresLedgerPageTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private var server: PostgreSQLStore!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try postgreSQLStore("round trips")
    }

    /// Saves employees named `names` in one save; their IDs, in order, and the save's token.
    private func insertEmployees(_ names: [String]) throws -> (ids: [ManagedObjectID], token: Int64) {
        let context = privateContext("writer")
        return try context.performAndWait { () throws(AmbarError) -> ([ManagedObjectID], Int64) in
            var employees: [Employee] = []
            for name in names {
                let employee = try context.insert(Employee.self)
                employee.name = name
                employees.append(employee)
            }
            try context.save()
            return (employees.map(\.objectID), try coordinator.currentHistoryToken())
        }
    }

    /// Every object a page's transactions inserted or updated.
    private func changedObjects(_ transactions: [HistoryTransaction]) -> Set<ManagedObjectID> {
        transactions.reduce(into: Set<ManagedObjectID>()) { ids, transaction in
            ids.formUnion(transaction.inserted)
            ids.formUnion(transaction.updated)
        }
    }

    /// Reads a page straight from the store; the page and how many statements it took.
    private func page(after token: Int64, expecting: Set<ManagedObjectID>) throws -> (page: LedgerPage, statements: Int) {
        let before = server.pool.statementsSent
        let page = try server.ledgerPage(after: token, limit: 100, expecting: expecting, rowsOf: changedObjects)
        return (page, server.pool.statementsSent - before)
    }

    func testThePageAndTheRowsADoorbellNamedAreOneStatement() throws {
        let start = try coordinator.currentHistoryToken()
        let (ids, token) = try insertEmployees(["ada", "grace", "edsger"])
        let (page, statements) = try page(after: start, expecting: Set(ids))
        XCTAssertEqual(statements, 1, "the page and its rows in one round trip")
        XCTAssertEqual(page.transactions.map(\.token), [token])
        XCTAssertEqual(Set(try XCTUnwrap(page.rows).map(\.id)), Set(ids))
        // Without a hint, the same page takes two statements (the page, then its rows).
        let (plain, plainStatements) = try self.page(after: start, expecting: [])
        XCTAssertEqual(plainStatements, 2)
        XCTAssertEqual(plain.transactions.map(\.token), [token])
        XCTAssertEqual(
            try XCTUnwrap(plain.rows).map { "\($0.id) \($0.values)" }.sorted(), try XCTUnwrap(page.rows).map { "\($0.id) \($0.values)" }.sorted(),
            "the same rows either way")
    }

    func testRowsTheLedgerNamesBeyondTheHintAreReadAfterThePage() throws {
        let start = try coordinator.currentHistoryToken()
        let (first, _) = try insertEmployees(["a", "b"])
        let (second, _) = try insertEmployees(["c"])
        // The doorbell named only the first save's objects; the page holds both saves.
        let (page, statements) = try page(after: start, expecting: Set(first))
        XCTAssertEqual(statements, 2, "the rows the hint missed take a second statement")
        XCTAssertEqual(page.transactions.count, 2)
        XCTAssertEqual(Set(try XCTUnwrap(page.rows).map(\.id)), Set(first + second))
    }

    func testRowsOfObjectsTheLedgerDoesNotNameAreLeftOut() throws {
        let (old, oldToken) = try insertEmployees(["old"])
        let (new, newToken) = try insertEmployees(["new"])
        // A stale or forged hint names an object of a transaction before the page.
        let (page, statements) = try page(after: oldToken, expecting: Set(old + new))
        XCTAssertEqual(statements, 1)
        XCTAssertEqual(page.transactions.map(\.token), [newToken])
        XCTAssertEqual(try XCTUnwrap(page.rows).map(\.id), new, "only the rows the page's transactions changed")
    }

    func testAnObjectDeletedSinceItsDoorbellHasNoRow() throws {
        let start = try coordinator.currentHistoryToken()
        let (ids, _) = try insertEmployees(["kept", "gone"])
        let context = privateContext("deleter")
        try context.performAndWait { () throws(AmbarError) in
            try context.delete(try context.existingObject(with: ids[1]))
            try context.save()
        }
        let (page, statements) = try page(after: start, expecting: Set(ids))
        XCTAssertEqual(statements, 1)
        XCTAssertEqual(page.transactions.count, 2)
        XCTAssertEqual(try XCTUnwrap(page.rows).map(\.id), [ids[0]], "the deleted object's row is gone in the page's snapshot")
    }

    func testAPageOfPurgedHistoryIsRefusedWithItsHint() throws {
        let start = try coordinator.currentHistoryToken()
        let (ids, token) = try insertEmployees(["x"])
        _ = try insertEmployees(["y"])
        XCTAssertGreaterThan(try coordinator.purgeHistory(through: token, lease: -1), 0)
        XCTAssertThrowsError(try page(after: start, expecting: Set(ids))) { error in
            guard case AmbarError.historyExpired(let after, let purged)? = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertEqual(after, start)
            XCTAssertEqual(purged, token)
        }
    }

    func testAnEmptyPageIsOneStatement() throws {
        let (ids, token) = try insertEmployees(["z"])
        let (page, statements) = try page(after: token, expecting: Set(ids))
        XCTAssertEqual(statements, 1)
        XCTAssertEqual(page.transactions.count, 0)
        XCTAssertEqual(page.rows?.count ?? 0, 0)
    }
}
