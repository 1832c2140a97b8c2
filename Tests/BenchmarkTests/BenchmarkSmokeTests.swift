import AmbarTestSupport
import Foundation
import XCTest

/// The benchmark's smoke mode: every workload runs end to end at small sizes — child
/// processes, sockets, the hub — and the report files come out complete. Figures are not judged
/// here (timed assertions flake on shared machines); `scripts/run-benchmarks` measures them.
final class BenchmarkSmokeTests: XCTestCase {
    func testTheSmokeRunMeasuresEveryWorkloadAndWritesTheReport() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-bench-smoke-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try ProcessRunner.run(BuiltProducts.url("ambar-bench"), ["--smoke", "--output", output.path], timeout: 300)
        XCTAssertEqual(result.status, 0, result.error)
        for title in [
            "1. Import", "2. Fetch", "3. Update", "4. Small saves", "5. Smart merge", "6. Cross-process", "7. Hub throughput", "8. Memory",
            "9. Viewers keeping up", "12. Change streams fanned out",
        ] {
            XCTAssertTrue(result.output.contains(title), "the table lists \(title)")
        }

        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: output.appendingPathComponent("latest.json"))) as? [String: Any]
        let results = try XCTUnwrap(json?["results"] as? [[String: Any]])
        XCTAssertEqual(results.compactMap { $0["number"] as? Int }, Array(1...9) + [12], "10 and 11 need --postgres")
        for workload in results {
            let figures = try XCTUnwrap(workload["figures"] as? [[String: Any]])
            XCTAssertFalse(figures.isEmpty)
            for figure in figures {
                let approach = figure["approach"] as? String ?? "?"
                let value = try XCTUnwrap(figure["value"] as? Double, "\(workload["title"] ?? "?"): \(approach) has a number")
                if approach.hasPrefix("highest pace kept up") {
                    // A search's result, not a measurement: 0 when no pace tried (down to 1/16 of
                    // the target) kept up, which on a loaded machine is a true answer (a debug
                    // build beside three busy processes reaches 1,250 records/s, old code and new).
                    XCTAssertGreaterThanOrEqual(value, 0, approach)
                } else if approach.hasPrefix("serve's memory per idle stream") {
                    // A difference of two RSS readings: at the smoke run's 10 streams it is within
                    // the heap's own movement, and may be 0 or below.
                    XCTAssertTrue(value.isFinite, approach)
                } else {
                    XCTAssertTrue(value > 0, "\(approach) measured something: \(value)")
                }
            }
        }
        let markdown = try String(contentsOf: output.appendingPathComponent("latest.md"), encoding: .utf8)
        XCTAssertTrue(markdown.contains("| 6. Cross-process |"))
        let svg = try String(contentsOf: output.appendingPathComponent("cross-process-latency.svg"), encoding: .utf8)
        XCTAssertTrue(svg.hasPrefix("<svg") && svg.contains("<rect x="), "a histogram with bars")
    }
}
