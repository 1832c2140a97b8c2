import AmbarCore
import AmbarTestSupport
import Foundation
import XCTest

@testable import AmbarPostgres

/// A column's values sent as one array with NULLs among them (`PostgresColumnArray`), read back
/// by a real PostgreSQL server with `unnest` as rows, element for element.
final class PostgresColumnArrayTests: PostgresConnectionTestCase {
    override class var database: String { "column_arrays" }

    func testEveryColumnTypeWithNullsComesBackRowForRow() throws {
        let integers: [Int64?] = [1, nil, .min, .max, 0]
        let reals: [Double?] = [1.5, -0.0, nil, .infinity, 1e-300]
        let texts: [String?] = ["a", "", "zß✓\u{1F600}", nil, "it's \"quoted\""]
        let blobs: [Data?] = [Data([0, 1, 255]), Data(), nil, Data(repeating: 7, count: 1_000), Data([0])]
        let rows = try connection.query(
            "SELECT n, i, r, t, b FROM unnest($1::bigint[], $2::double precision[], $3::text[], $4::bytea[]) WITH ORDINALITY AS u(i, r, t, b, n) ORDER BY n",
            [.column(.integers(integers)), .column(.reals(reals)), .column(.texts(texts)), .column(.blobs(blobs))]
        ).rows
        XCTAssertEqual(rows.count, 5)
        for (n, row) in rows.enumerated() {
            XCTAssertEqual(row[0], .integer(Int64(n + 1)))
            XCTAssertEqual(row[1], integers[n].map { .integer($0) } ?? .null, "integer \(n)")
            XCTAssertEqual(row[2], reals[n].map { .real($0) } ?? .null, "real \(n)")
            XCTAssertEqual(row[3], texts[n].map { .text($0) } ?? .null, "text \(n)")
            XCTAssertEqual(row[4], blobs[n].map { .blob($0) } ?? .null, "blob \(n)")
        }
    }

    func testAnEmptyColumnAndAnAllNullColumnAreArraysOfTheirLength() throws {
        let lengths = try connection.query(
            "SELECT cardinality($1::bigint[]), cardinality($2::text[]), array_position($2::text[], NULL)",
            [.column(.integers([])), .column(.texts([nil, nil, nil]))]
        ).rows
        XCTAssertEqual(lengths, [[.integer(0), .integer(3), .integer(1)]])
    }

    func testDecimalsSentAsTextArriveExact() throws {
        let rows = try connection.query(
            "SELECT sum(d)::text FROM unnest($1::text[]::numeric[]) AS u(d)", [.column(.texts(["0.1", "0.2", nil, "12345678901234567890.123456789"]))]
        ).rows
        XCTAssertEqual(rows, [[.text("12345678901234567890.423456789")]])
    }
}
