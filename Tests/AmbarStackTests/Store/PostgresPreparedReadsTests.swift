import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

@testable import AmbarCore
@testable import AmbarPostgres

/// On a PostgreSQL server, the store's reads — fetches, faults firing, to-many faults, counts —
/// are prepared statements of their connection: parsed and planned once per shape, whatever
/// values later calls bring. A read whose prepared plan another process's schema change made
/// stale runs again, parsed anew, instead of failing.
final class PostgresPreparedReadsTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private var server: PostgreSQLStore!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try postgreSQLStore("prepared statements")
    }

    /// The texts of the prepared statements of the pool's connection (but this listing's own).
    /// Every call in these tests runs one at a time, so the pool holds one connection, which this
    /// read uses too.
    private func preparedStatements() throws -> [String] {
        let listing = "SELECT statement FROM pg_prepared_statements ORDER BY name"
        return try server.read("list prepared statements", listing, []).compactMap { PostgreSQLValues.text($0[0]) }.filter { $0 != listing }
    }

    /// Saves `count` employees of one department; their IDs and the department's.
    private func seed(_ count: Int) throws -> (employees: [ManagedObjectID], department: ManagedObjectID) {
        let context = privateContext("seed")
        return try context.performAndWait { () throws(AmbarError) in
            let department = try context.insert(Department.self)
            department.name = "research"
            var employees: [Employee] = []
            for n in 0..<count {
                let employee = try context.insert(Employee.self)
                employee.name = "employee \(n)"
                employee.salary = Double(n)
                employee.department = department
                employees.append(employee)
            }
            try context.save()
            return (employees.map(\.objectID), department.objectID)
        }
    }

    func testFetchesFaultsAndCountsArePreparedOncePerShape() throws {
        let (ids, department) = try seed(6)
        // Each read shape several times, each time with other values.
        func readEverything(_ round: Int) throws {
            let context = privateContext("reader \(round)")
            try context.performAndWait { () throws in
                let named = try context.fetch(FetchRequest<Employee>(predicate: Key<String>("name") == "employee \(round)"))
                XCTAssertEqual(named.map(\.name), ["employee \(round)"])
                XCTAssertEqual(try context.count(for: FetchRequest<Employee>(predicate: Key<Double>("salary") >= Double(round))), 6 - round)
                let fault = try XCTUnwrap(try context.existingObject(with: ids[5 - round]) as? Employee)
                XCTAssertEqual(fault.salary, Double(5 - round), "the fault fired with its row")
                let owner = try XCTUnwrap(try context.existingObject(with: department) as? Department)
                XCTAssertEqual(owner.employees.count, 6, "the to-many fault fired")
            }
        }
        try readEverything(0)
        try readEverything(1)
        let afterTwo = try preparedStatements()
        XCTAssertTrue(afterTwo.contains { $0.contains("t0.\"name\" = $1") }, "the fetch by name is prepared: \(afterTwo)")
        XCTAssertTrue(afterTwo.contains { $0.hasPrefix("SELECT COUNT(*)") }, "the count is prepared: \(afterTwo)")
        XCTAssertTrue(afterTwo.contains { $0.contains("FROM \"Employee\" AS t0 WHERE t0.Z_PK = ANY($1::bigint[])") }, "firing a fault is prepared: \(afterTwo)")
        XCTAssertTrue(afterTwo.contains { $0.contains("WHERE \"department\" = $1") }, "firing a to-many fault is prepared: \(afterTwo)")
        for round in 2..<5 { try readEverything(round) }
        XCTAssertEqual(try preparedStatements(), afterTwo, "later reads of the same shapes reuse their statements, whatever their values")
    }

    func testAReadWhosePreparedPlanASchemaChangeMadeStaleRunsAgain() throws {
        try rawExecute("DROP TABLE IF EXISTS later_table; CREATE TABLE later_table (n bigint); INSERT INTO later_table VALUES (7)")
        let sql = "SELECT * FROM later_table WHERE n >= $1"
        for _ in 0..<2 { XCTAssertEqual(try server.read("read", sql, [.integer(0)]), [[.integer(7)]]) }
        XCTAssertTrue(try preparedStatements().contains(sql), "prepared on its second call")
        // Another process (psql) changes the table: the prepared plan's result would change.
        try rawExecute("ALTER TABLE later_table ADD COLUMN label text; UPDATE later_table SET label = 'seven'")
        XCTAssertEqual(try server.read("read", sql, [.integer(0)]), [[.integer(7), .text("seven")]], "run again, parsed anew, not refused")
        for _ in 0..<2 { XCTAssertEqual(try server.read("read", sql, [.integer(0)]), [[.integer(7), .text("seven")]]) }
        XCTAssertTrue(try preparedStatements().contains(sql), "prepared again")
    }

    /// A lookup by a unique attribute is found in its index: the equality the store sends is one
    /// PostgreSQL can look up (`=`), not the null-safe form, which reads the whole table.
    func testALookupByAUniqueValueReadsTheIndexNotTheTable() throws {
        let writer = privateContext("writer")
        try writer.performAndWait { () throws(AmbarError) in
            for n in 0..<5_000 {
                let employee = try writer.insert(Employee.self)
                employee.name = "employee \(n)"
                employee.email = "e\(n)@example.com"
            }
            try writer.save()
        }
        try rawExecute("ANALYZE")
        let reader = privateContext("reader")
        try reader.performAndWait { () throws in
            for n in [7, 4_321] {
                let found = try reader.fetch(FetchRequest<Employee>(predicate: Key<String>("email") == "e\(n)@example.com"))
                XCTAssertEqual(found.map(\.name), ["employee \(n)"])
            }
            let nobody = try reader.fetch(FetchRequest<Employee>(predicate: !(Key<String>("email") == "e7@example.com")))
            XCTAssertEqual(nobody.count, 4_999, "NOT around the equality keeps every other row")
        }
        let lookup = try XCTUnwrap(try preparedStatements().first { $0.contains("t0.\"email\"") }, "the lookup (sent twice) was prepared")
        let plan = try rawRows("PREPARE lookup(text) AS \(lookup); EXPLAIN EXECUTE lookup('e7@example.com')")
        XCTAssertTrue(plan.contains { $0.contains("Index Scan") }, "the lookup reads the index on email: \(plan)")
        XCTAssertFalse(plan.contains { $0.contains("Seq Scan") }, "the lookup does not read the table: \(plan)")
    }
}
