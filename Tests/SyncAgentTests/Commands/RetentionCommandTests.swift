import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// The process serving the hub purges the ledger on a schedule: `--history-retention` ages
/// transactions out, `--consumer-lease` bounds how long a consumer gone away holds them back
/// (sharing processes' merge positions are removed after it, durable consumers' kept), and
/// `status --json` shows the ledger and each cursor's age.
final class RetentionCommandTests: AgentTestCase {
    func testTheHubPurgesByAgeAndForgetsConsumersGonePastTheLease() throws {
        try initStore()
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        _ = try startAgent(["hub", "--directory", directory.url.path, "--history-retention", "1", "--consumer-lease", "8"])
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: socket) })
        let coordinator = try PersistentStoreCoordinator(model: try PersistentStoreCoordinator.storedModel(at: store), store: .sqlite(store))
        var tokens: [Int] = []
        for index in 0..<3 {
            let file = directory.url.appendingPathComponent("batch-\(index).ndjson")
            try Data(#"{"uid":"k\#(index)","value":\#(index)}"#.utf8).write(to: file)
            let result = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", "--json", file.path])
            XCTAssertEqual(result.status, 0, result.error)
            tokens += try XCTUnwrap(try json(result.output)["tokens"] as? [Int])
        }
        // A sharing process that recorded its merge position once and died, and a durable
        // consumer that went away.
        try coordinator.setHistoryCursor(consumer: "gone-away", token: Int64(tokens[0]), lease: 8)
        try coordinator.setHistoryCursor(consumer: "durable-away", token: Int64(tokens[0]))
        let first = try status()
        let history = try XCTUnwrap(first["history"] as? [String: Any])
        XCTAssertEqual(history["head_token"] as? Int, tokens.last)
        let cursor = try XCTUnwrap((first["cursors"] as? [[String: Any]])?.first { $0["consumer"] as? String == "gone-away" })
        XCTAssertNotNil(cursor["age_seconds"] as? Double, "each cursor's age is shown")

        // Past the lease the merge position goes; past the retention the transactions go. The
        // durable consumer's position stays, but no longer holds the history back.
        var last: [String: Any] = [:]
        XCTAssertTrue(
            try eventually(timeout: 40) {
                last = try status()
                let cursors = last["cursors"] as? [[String: Any]] ?? []
                let ledger = last["history"] as? [String: Any] ?? [:]
                return !cursors.contains { $0["consumer"] as? String == "gone-away" } && ledger["transactions"] as? Int == 0
            }, "the hub removed the stale cursor and purged the aged transactions: \(last)")
        let ledger = try XCTUnwrap(last["history"] as? [String: Any])
        XCTAssertTrue(ledger["oldest_token"] is NSNull, "an empty ledger has no oldest token")
        // The head stays (tokens are never reused). It may be past the last import: once the store
        // has been idle for 10 s the hub truncates the WAL and records an empty `ambar.checkpoint`
        // transaction, which ages out too (a slow run, under ThreadSanitizer, gets there).
        let head = try XCTUnwrap(ledger["head_token"] as? Int)
        XCTAssertGreaterThanOrEqual(head, try XCTUnwrap(tokens.last), "the head stays: tokens are never reused")
        XCTAssertLessThanOrEqual(head, try XCTUnwrap(tokens.last) + 1, "at most one checkpoint marker")
        XCTAssertEqual(ledger["purged_through"] as? Int, head, "purged through the head")
        XCTAssertThrowsError(try coordinator.history(after: 0), "a consumer that far behind is told its history expired")
        let durable = try XCTUnwrap((last["cursors"] as? [[String: Any]])?.first { $0["consumer"] as? String == "durable-away" })
        XCTAssertEqual(durable["token"] as? Int, tokens[0], "a durable consumer's position stays for it to find out what it missed")
        XCTAssertEqual(durable["expired"] as? Bool, true, "status says its history was purged")
        XCTAssertEqual(durable["lag_tokens"] as? Int, head - tokens[0])
        XCTAssertEqual(durable["lag_seconds"] as? Double, 0, "no transaction after it is kept to date the lag")
        let lines = try agent(["status", "--directory", directory.url.path]).output
        XCTAssertTrue(lines.contains("cursor     durable-away (consumer) at \(tokens[0]), its history was purged"), lines)
    }

    /// A writer whose clock is a year ahead (faketime) does not stop purging: the hub tells the
    /// ledger's age by its own clock.
    func testAWriterWithAClockAYearAheadDoesNotStopPurging() throws {
        if TestScale.isReduced {
            // faketime's LD_PRELOAD and ThreadSanitizer's runtime both take over the clock
            // functions; together the instrumented process hangs. The plain pass runs this test.
            throw XCTSkip("faketime cannot run a ThreadSanitizer-instrumented sync-agent")
        }
        try initStore()
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        _ = try startAgent(["hub", "--directory", directory.url.path, "--history-retention", "1"])
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: socket) })
        var tokens: [Int] = []
        for (index, skew) in ["", "+365d", ""].enumerated() {
            let file = directory.url.appendingPathComponent("batch-\(index).ndjson")
            try Data(#"{"uid":"k\#(index)","value":\#(index)}"#.utf8).write(to: file)
            let arguments = ["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", "--json", file.path]
            let result =
                skew.isEmpty
                ? try agent(arguments)
                : try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/faketime"), ["-f", skew, agentBinary.path] + arguments, timeout: 60)
            XCTAssertEqual(result.status, 0, result.error)
            tokens += try XCTUnwrap(try json(result.output)["tokens"] as? [Int])
        }
        let future = try XCTUnwrap(
            try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store)).history(after: Int64(tokens[0])).first?.timestamp)
        XCTAssertGreaterThan(future.timeIntervalSinceNow, 300 * 86_400, "the second transaction carries a date a year ahead")
        var last: [String: Any] = [:]
        XCTAssertTrue(
            try eventually(timeout: 40) {
                last = try status()
                let ledger = last["history"] as? [String: Any] ?? [:]
                return (ledger["purged_through"] as? Int ?? 0) >= tokens[2] && ledger["transactions"] as? Int == 0
            }, "every transaction was purged, the future-dated one and those after it too: \(last)")
    }

    func testAConfigurationFileSetsTheRetentionAndABadOneIsRefused() throws {
        try initStore()
        let config = directory.url.appendingPathComponent("hub.conf")
        try "history-retention = 0\n".write(to: config, atomically: true, encoding: .utf8)
        let refused = try agent(["hub", "--directory", directory.url.path, "--config", config.path], timeout: 20)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.error.contains("history-retention must be a positive number of seconds"), refused.error)
        let flag = try agent(["hub", "--directory", directory.url.path, "--history-retention=-5"], timeout: 20)
        XCTAssertNotEqual(flag.status, 0)
        XCTAssertTrue(flag.error.contains("--history-retention must be a positive number of seconds"), flag.error)
    }

    private func status() throws -> [String: Any] {
        try json(try agent(["status", "--directory", directory.url.path, "--json"]).output)
    }
}
