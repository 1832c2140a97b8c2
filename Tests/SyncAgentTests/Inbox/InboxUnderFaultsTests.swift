import AmbarStack
import AmbarTestSupport
import Foundation
import GRDBSQLite
import XCTest

/// `sync-agent run` tells a file's faults from the store's: only bad data goes to `failed/`. A
/// file dropped while another SQLite client holds the write lock waits in the inbox and is
/// imported once the lock is released; lines and files beyond the configured maximums are refused
/// with a clear reason.
final class InboxUnderFaultsTests: AgentTestCase {
    func testAFileDroppedWhileAnotherClientHoldsTheWriteLockWaitsAndIsImported() throws {
        try initStore()
        let log = directory.url.appendingPathComponent("run.log")
        let run = try startRun(log: log)
        let inbox = directory.url.appendingPathComponent("inbox/n")
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: inbox.path) }, "the agent made its inbox")

        // Another client takes SQLite's write lock and holds it past the agent's busy timeout.
        var lock: OpaquePointer?
        XCTAssertEqual(sqlite3_open_v2(store.path, &lock, SQLITE_OPEN_READWRITE, nil), SQLITE_OK)
        defer { sqlite3_close_v2(lock) }
        XCTAssertEqual(sqlite3_exec(lock, "BEGIN IMMEDIATE", nil, nil, nil), SQLITE_OK)
        try drop(#"{"uid":"held","value":1}"#, as: "held.ndjson")
        XCTAssertTrue(
            eventually(timeout: 40) { (try? String(contentsOf: log, encoding: .utf8))?.contains("stays in the inbox") == true },
            "the agent reported that the store could not take the file")
        XCTAssertTrue(FileManager.default.fileExists(atPath: inbox.appendingPathComponent("held.ndjson").path), "the file is still in the inbox")
        XCTAssertEqual(try contents("failed/n"), [], "nothing went to failed/")
        XCTAssertEqual(sqlite3_exec(lock, "ROLLBACK", nil, nil, nil), SQLITE_OK)

        XCTAssertTrue(eventually(timeout: 30) { (try? self.contents("processed/n")) == ["held.ndjson"] }, "imported once the lock was released")
        XCTAssertEqual(try contents("failed/n"), [])
        XCTAssertTrue(run.isRunning)
        let history = try agent(["history", "--directory", directory.url.path, "--json"]).output.split(separator: "\n")
        XCTAssertEqual(try history.map(json).filter { ($0["inserted"] as? [String])?.isEmpty == false }.count, 1, "imported once")
    }

    func testLinesAndFilesBeyondTheMaximumsAreRefusedWithTheReason() throws {
        try initStore()
        let config = directory.url.appendingPathComponent("agent.conf")
        try "max-line-bytes = 100\nmax-file-bytes = 1000\n".write(to: config, atomically: true, encoding: .utf8)
        _ = try startRun(log: directory.url.appendingPathComponent("run.log"), extra: ["--config", config.path])
        let inbox = directory.url.appendingPathComponent("inbox/n")
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: inbox.path) })
        let long = #"{"uid":"long","value":1,"pad":""# + String(repeating: "x", count: 200) + #""}"#
        try drop([#"{"uid":"a","value":1}"#, long, #"{"uid":"b","value":2}"#].joined(separator: "\n"), as: "long-line.ndjson")
        try drop(Array(repeating: #"{"uid":"c","value":3}"#, count: 60).joined(separator: "\n"), as: "large.ndjson")
        let expected = ["large.ndjson", "large.ndjson.error.txt", "long-line.ndjson", "long-line.ndjson.error.txt"]
        XCTAssertTrue(eventually { (try? self.contents("failed/n")) == expected }, "both files and their reports are in failed/")
        let lineReport = try String(contentsOf: directory.url.appendingPathComponent("failed/n/long-line.ndjson.error.txt"), encoding: .utf8)
        XCTAssertTrue(lineReport.contains("line 2: the line is longer than 100 bytes"), lineReport)
        let fileReport = try String(contentsOf: directory.url.appendingPathComponent("failed/n/large.ndjson.error.txt"), encoding: .utf8)
        XCTAssertTrue(fileReport.contains("more than the maximum of 1000"), fileReport)
        let history = try agent(["history", "--directory", directory.url.path, "--json"]).output.split(separator: "\n")
        XCTAssertEqual(try history.map(json).filter { ($0["inserted"] as? [String])?.isEmpty == false }.count, 0, "nothing of either file was written")
    }

    private func startRun(log: URL, extra: [String] = []) throws -> Process {
        try startAgent(["run", "--name", "n", "--entity", "Item", "--key", "uid", "--directory", directory.url.path] + extra, log: log)
    }

    /// Writes `text` beside the inbox and renames it in, as writers should.
    private func drop(_ text: String, as name: String) throws {
        let staging = directory.url.appendingPathComponent(".\(name)")
        try text.write(to: staging, atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(staging.path, directory.url.appendingPathComponent("inbox/n/\(name)").path), 0)
    }

    private func contents(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.appendingPathComponent(folder).path).sorted()
    }
}
