import AmbarCore
import AmbarTestSupport
import Foundation
import XCTest

@testable import AmbarPostgres

/// The store's recurring statements (`queryRecurring`) become prepared statements of their
/// connection on a real PostgreSQL server: prepared on their second call and reused after, kept
/// when the server refuses a call's values, and prepared again under a new name once a
/// preparation that failed can succeed.
final class PostgresPreparedStatementTests: PostgresConnectionTestCase {
    override class var database: String { "prepared_statements" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        _ = try connection.query("DROP TABLE IF EXISTS later_table", [])
    }

    /// The names of this session's prepared statements.
    private func prepared() throws -> [String] {
        try connection.query("SELECT name FROM pg_prepared_statements ORDER BY name", []).rows.compactMap {
            if case .text(let name) = $0[0] { return name }
            return nil
        }
    }

    func testARecurringStatementIsPreparedOnItsSecondCallAndReusedAfter() throws {
        let sql = "SELECT $1::bigint + 1"
        XCTAssertEqual(try connection.queryRecurring(sql, [.integer(1)]), [[.integer(2)]])
        XCTAssertEqual(try prepared(), [], "a statement sent once is sent unnamed")
        XCTAssertEqual(try connection.queryRecurring(sql, [.integer(2)]), [[.integer(3)]])
        XCTAssertEqual(try prepared(), ["ambar_1"], "the second call prepared it")
        for n in 3...6 {
            XCTAssertEqual(try connection.queryRecurring(sql, [.integer(Int64(n))]), [[.integer(Int64(n + 1))]])
        }
        XCTAssertEqual(try prepared(), ["ambar_1"], "later calls reuse it")
    }

    func testTheSameTextWithOtherValueTypesIsAStatementOfItsOwn() throws {
        let sql = "SELECT coalesce($1::bigint, -1)"
        for _ in 0..<2 {
            XCTAssertEqual(try connection.queryRecurring(sql, [.null]), [[.integer(-1)]])
            XCTAssertEqual(try connection.queryRecurring(sql, [.integer(5)]), [[.integer(5)]])
        }
        XCTAssertEqual(try prepared(), ["ambar_1", "ambar_2"], "a NULL leaves its type to the server: another statement")
    }

    func testAStatementRefusedForItsValuesKeepsItsPreparation() throws {
        let sql = "SELECT 10 / $1::int"
        XCTAssertEqual(try connection.queryRecurring(sql, [.integer(2)]), [[.integer(5)]])
        XCTAssertEqual(try connection.queryRecurring(sql, [.integer(5)]), [[.integer(2)]])
        XCTAssertThrowsError(try connection.queryRecurring(sql, [.integer(0)])) { error in
            XCTAssertEqual((error as? SQLServerError)?.sqlState, "22012", "\(error)")
        }
        XCTAssertEqual(try connection.queryRecurring(sql, [.integer(1)]), [[.integer(10)]])
        XCTAssertEqual(try prepared(), ["ambar_1"], "the refusal did not cost the preparation")
    }

    /// postgres-nio refuses a name whose preparation failed for the rest of the session: the
    /// shape is prepared again under a new name once it can be.
    func testAStatementWhosePreparationFailedIsPreparedAgainOnceItCan() throws {
        let sql = "SELECT count(*) FROM later_table WHERE n > $1"
        for _ in 0..<2 {
            XCTAssertThrowsError(try connection.queryRecurring(sql, [.integer(0)])) { error in
                XCTAssertEqual((error as? SQLServerError)?.sqlState, "42P01", "\(error)")
            }
        }
        _ = try connection.query("CREATE TABLE later_table (n bigint)", [])
        _ = try connection.query("INSERT INTO later_table VALUES (1), (2), (3)", [])
        for _ in 0..<3 {
            XCTAssertEqual(try connection.queryRecurring(sql, [.integer(1)]), [[.integer(2)]])
        }
        XCTAssertEqual(try prepared(), ["ambar_2"], "prepared again under a new name; the failed one is not on the server")
    }

    /// A prepared statement whose result changes with the schema fails once, as the server says,
    /// and is prepared again on its next calls.
    func testAPreparedStatementWhosePlanTheSchemaChangedIsPreparedAgain() throws {
        _ = try connection.query("CREATE TABLE later_table (n bigint)", [])
        let sql = "SELECT * FROM later_table WHERE n >= $1"
        for _ in 0..<2 { XCTAssertEqual(try connection.queryRecurring(sql, [.integer(0)]), []) }
        XCTAssertEqual(try prepared(), ["ambar_1"])
        _ = try connection.query("ALTER TABLE later_table ADD COLUMN label text", [])
        _ = try connection.query("INSERT INTO later_table VALUES (7, 'seven')", [])
        XCTAssertThrowsError(try connection.queryRecurring(sql, [.integer(0)])) { error in
            XCTAssertEqual((error as? SQLServerError)?.sqlState, "0A000", "cached plan must not change result type: \(error)")
        }
        for _ in 0..<2 {
            XCTAssertEqual(try connection.queryRecurring(sql, [.integer(0)]), [[.integer(7), .text("seven")]])
        }
        XCTAssertEqual(try prepared(), ["ambar_1", "ambar_2"])
    }

    func testShapesPastTheLimitOrTooLongAreSentUnnamed() throws {
        var shapes = PreparedShapes()
        let long = PreparedShapes.Key(sql: "SELECT " + String(repeating: "1 + ", count: PreparedShapes.longestText / 4) + "1", parameters: [])
        XCTAssertNil(shapes.name(for: long))
        XCTAssertNil(shapes.name(for: long), "a long text is never prepared")
        for n in 0..<PreparedShapes.limit {
            let key = PreparedShapes.Key(sql: "SELECT \(n)", parameters: [])
            XCTAssertNil(shapes.name(for: key), "first sighting")
            XCTAssertEqual(shapes.name(for: key), "ambar_\(n + 1)")
        }
        let past = PreparedShapes.Key(sql: "SELECT 'past'", parameters: [])
        XCTAssertNil(shapes.name(for: past))
        XCTAssertNil(shapes.name(for: past), "past the limit, unnamed")
        XCTAssertEqual(shapes.name(for: PreparedShapes.Key(sql: "SELECT 0", parameters: [])), "ambar_1", "the named ones stay")
    }
}
