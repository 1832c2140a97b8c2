import AmbarTestSupport
import Foundation
import XCTest

/// `sync-agent demo`: three real processes converge, and the demo says so only after checking.
final class DemoCommandTests: AgentTestCase {
    func testDemoConvergesAndExitsZero() throws {
        let result = try agent(["demo", "--records", "1200", "--batch", "200"], timeout: 180)
        XCTAssertEqual(result.status, 0, result.output + result.error)
        XCTAssertTrue(result.output.contains("converged: yes"), result.output)
        XCTAssertTrue(result.output.contains("records/s"), result.output)
        XCTAssertTrue(result.output.contains("p99"), result.output)
        // 1200 inserted, every fifth updated, every tenth deleted: 1080 remain, in every process.
        XCTAssertTrue(result.output.contains("(1080 products)"), result.output)
        XCTAssertEqual(result.output.components(separatedBy: "(1080)").count - 1, 2, "both viewers hold all 1080: \(result.output)")
    }

    func testDemoJSONCarriesTheFigures() throws {
        let result = try agent(["demo", "--records", "300", "--batch", "100", "--json"], timeout: 180)
        XCTAssertEqual(result.status, 0, result.error)
        let facts = try json(result.output)
        XCTAssertEqual(facts["converged"] as? Bool, true)
        XCTAssertEqual(facts["count"] as? Int, 270)
        XCTAssertEqual(facts["transactions"] as? Int, 3 + 1 + 1)
        XCTAssertEqual((facts["viewers"] as? [[String: Any]])?.compactMap { $0["merges"] as? Int }, [5, 5], "every transaction merged live in each viewer")
        XCTAssertGreaterThan(facts["records_per_second"] as? Double ?? 0, 0)
    }
}
