import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// The status page of `sync-agent serve`, loaded in a real browser: Debian's chromium, headless,
/// driven through the DevTools protocol by `Tests/Browser/status_page.py`. The page shows an
/// import made by another process within 2 seconds of the import's end (the issue's bound for a
/// live page), with the hub, the inboxes and the latency plot; behind a token it asks for one.
final class StatusPageTests: AgentTestCase {
    private static let driver = Repository.url("Tests/Browser/status_page.py")

    /// Runs the driver with `arguments`; its one JSON line.
    private func browse(_ arguments: [String]) throws -> [String: Any] {
        XCTAssertTrue(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            "Debian's chromium is missing: scripts/install-deps --tests installs it (with python3-websocket)")
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/python3"), [Self.driver.path] + arguments, timeout: 180)
        XCTAssertEqual(result.status, 0, "the browser driver failed: \(result.error)")
        return try json(result.output)
    }

    private func shown(_ report: [String: Any], _ key: String) throws -> [String: Any] {
        try XCTUnwrap(report[key] as? [String: Any], "the driver read nothing for \(key): \(report)")
    }

    func testAHeadlessBrowserShowsAnImportWithinTwoSecondsWithTheHubInboxesAndLatency() throws {
        try initStore()
        let dir = directory.url.path
        _ = try startAgent(["hub", "--directory", dir])
        // An inbox agent that has refused one file: the page lists it.
        _ = try startAgent(["run", "--name", "orders", "--entity", "Item", "--key", "uid", "--directory", dir, "--poll-interval", "50"])
        let inbox = directory.url.appendingPathComponent("inbox/orders")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        try #"{"uid": 12}"#.write(to: directory.url.appendingPathComponent(".broken"), atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(directory.url.appendingPathComponent(".broken").path, inbox.appendingPathComponent("broken.ndjson").path), 0)
        let refused = directory.url.appendingPathComponent("failed/orders/broken.ndjson")
        XCTAssertTrue(eventually(timeout: 30) { FileManager.default.fileExists(atPath: refused.path) }, "the agent refuses the bad file")
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        XCTAssertTrue(
            try eventually(timeout: 30) {
                let status = try agent(["status", "--directory", dir, "--json"])
                return (try json(status.output)["hub"] as? [String: Any])?["peer_count"] as? Int == 2
            }, "the agent and serve are the hub's peers before the page loads")

        let records = directory.url.appendingPathComponent("records.ndjson")
        try (0..<40).map { #"{"uid":"u\#($0)","value":\#($0)}"# }.joined(separator: "\n").write(to: records, atomically: true, encoding: .utf8)
        let report = try browse([
            "http://127.0.0.1:\(port)/", "--expect-objects", "40", "--expect-author", "sync-agent import", "--deadline", "2", "--",
            agentBinary.path, "import", "--directory", dir, "--entity", "Item", "--key", "uid", records.path,
        ])
        XCTAssertNotNil(report["live_after_seconds"] as? Double, "the page's change stream went live: \(report)")
        let before = try shown(report, "before")
        // Ten seconds after the hub starts, its upkeep may record its checkpoint marker (an empty
        // transaction): the page may show it before the import, or not yet.
        let headBefore = try XCTUnwrap(Int(before["head"] as? String ?? ""), "\(before)")
        XCTAssertLessThanOrEqual(headBefore, 1)
        XCTAssertEqual(before["objects"] as? String, "0")
        XCTAssertEqual(before["hub"] as? String, "up")
        XCTAssertEqual(before["peers"] as? String, "2", "the hub's peers: the inbox agent and serve")
        let peers = (before["peer_rows"] as? [String]) ?? []
        XCTAssertEqual(peers.count, 2, "\(peers)")
        for name in ["sync-agent run orders", "sync-agent serve"] {
            XCTAssertTrue(peers.contains { $0.contains(" \(name) ") }, "each peer is listed by its role: \(peers)")
        }
        XCTAssertEqual(before["inboxes"] as? [String], ["orders 0 0 1 broken.ndjson"])

        let command = try XCTUnwrap(report["command"] as? [String: Any])
        XCTAssertEqual(command["status"] as? Int, 0, "the import: \(command)")
        let after = try shown(report, "after")
        XCTAssertNotNil(
            report["shown_after_seconds"] as? Double, "the page did not show the import within 2 seconds of its end; it showed \(after)")
        XCTAssertEqual(after["objects"] as? String, "40")
        let rows = try XCTUnwrap(after["rows"] as? [String])
        let row = try XCTUnwrap(rows.first)
        let token = try XCTUnwrap(Int(row.prefix { $0 != " " }), row)
        XCTAssertEqual(after["head"] as? String, "\(token)", "the newest row is the head")
        XCTAssertGreaterThan(token, headBefore)
        XCTAssertTrue(row.contains("sync-agent import"), "the transaction's author: \(row)")
        XCTAssertTrue(row.contains(" 40 0 0 "), "40 inserted, none updated or deleted: \(row)")
        XCTAssertTrue(rows.dropFirst().allSatisfy { $0.contains(" 0 0 0 ") }, "before the import, only markers: \(rows)")

        XCTAssertNotNil(report["plotted_after_seconds"] as? Double, "the merge is plotted: \(report)")
        let plotted = try shown(report, "plotted")
        XCTAssertEqual(plotted["latency_points"] as? Int, 1)
        XCTAssertTrue((plotted["latency"] as? String)?.hasPrefix("1 merge(s) in the last 5 minutes") == true, "\(plotted)")
        XCTAssertEqual(plotted["error"] as? String, "")
        XCTAssertEqual(report["console"] as? [String], [], "the page logged or threw nothing")

        // What the plot reads, as its documented JSON: the import's one merge into serve.
        let latency = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            ["-c", "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())", "http://127.0.0.1:\(port)/v1/latency"])
        XCTAssertEqual(latency.status, 0, latency.error)
        let answer = try json(latency.output)
        XCTAssertEqual(answer["window_seconds"] as? Double, 600)
        let points = try XCTUnwrap(answer["points"] as? [[String: Any]])
        XCTAssertEqual(points.map { $0["token"] as? Int }, [token])
        XCTAssertGreaterThanOrEqual(points.first?["latency_ms"] as? Double ?? -1, 0)
        let at = try XCTUnwrap(points.first?["at"] as? Double)
        XCTAssertLessThan(abs(at - Date().timeIntervalSince1970), 120, "the merge's time, in seconds since 1970")
    }

    func testBehindATokenThePageIsServedAsksForTheTokenAndWorksWithIt() throws {
        try initStore()
        let tokenFile = directory.url.appendingPathComponent("token")
        try "page-token-42\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0", "--token-file", tokenFile.path])
        defer { kill(serve.processIdentifier, SIGTERM) }

        let asked = try browse(["http://127.0.0.1:\(port)/", "--token-form"])
        XCTAssertEqual(asked["asked_for_token"] as? Bool, true, "without a token the page asks for it: \(asked)")
        XCTAssertEqual(try shown(asked, "shown")["head"] as? String, "–", "and shows no data")

        let withToken = try browse(["http://127.0.0.1:\(port)/#token=page-token-42"])
        XCTAssertNotNil(withToken["live_after_seconds"] as? Double, "with the token in the address the page goes live: \(withToken)")
        let before = try shown(withToken, "before")
        XCTAssertEqual(before["head"] as? String, "0")
        XCTAssertEqual(before["token_form"] as? Bool, false)
        XCTAssertEqual(withToken["console"] as? [String], [])
    }
}
