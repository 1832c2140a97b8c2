import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `sync-agent run`: files dropped into the inbox are imported once each, crash or not.
final class RunCommandTests: AgentTestCase {
    var inbox: URL { directory.url.appendingPathComponent("inbox/alpha") }
    var processed: URL { directory.url.appendingPathComponent("processed/alpha") }
    var failed: URL { directory.url.appendingPathComponent("failed/alpha") }

    func runArguments() -> [String] {
        ["run", "--name", "alpha", "--entity", "Item", "--key", "uid", "--directory", directory.url.path, "--poll-interval", "50"]
    }

    /// Writes `lines` under a hidden name, then renames the file into the inbox, as writers should.
    func drop(_ name: String, _ lines: [String]) throws {
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let temporary = inbox.appendingPathComponent(".\(name).part")
        try (lines.joined(separator: "\n") + "\n").write(to: temporary, atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(temporary.path, inbox.appendingPathComponent(name).path), 0)
    }

    func files(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// The ledger's transactions by the agent.
    func agentTransactions() throws -> [[String: Any]] {
        let output = try agent(["history", "--directory", directory.url.path, "--json"]).output
        return try output.split(separator: "\n").map { try json($0) }.filter { ($0["author"] as? String) == "sync-agent run alpha" }
    }

    func testADroppedFileIsImportedOnceEvenWhenTheAgentDiesAfterTheCommit() throws {
        try initStore()
        // The first agent dies right after committing the file, before moving it.
        let doomed = try startAgent(runArguments(), environment: ["AMBAR_FAULT_INJECTION": "after-commit"])
        try drop("batch-1.ndjson", [#"{"uid":"a","value":1}"#, #"{"uid":"b","value":2}"#])
        doomed.waitUntilExit()
        XCTAssertEqual(doomed.terminationStatus, 86, "the injected crash point was reached")
        XCTAssertEqual(files(in: inbox), ["batch-1.ndjson"], "the file was not moved before the crash")
        XCTAssertEqual(try agentTransactions().count, 1, "but its objects were committed")

        // The restarted agent recognizes the file and only moves it.
        let agentProcess = try startAgent(runArguments())
        XCTAssertTrue(eventually { files(in: processed) == ["batch-1.ndjson"] }, "moved to processed")
        XCTAssertEqual(files(in: inbox), [])
        XCTAssertEqual(try agentTransactions().count, 1, "not imported a second time")

        // A new file (same name, new content) is a new drop and is imported.
        try drop("batch-1.ndjson", [#"{"uid":"a","value":10}"#])
        XCTAssertTrue(eventually { files(in: processed).count == 2 })
        XCTAssertEqual(try agentTransactions().count, 2)

        kill(agentProcess.processIdentifier, SIGTERM)
        agentProcess.waitUntilExit()
        XCTAssertEqual(agentProcess.terminationStatus, 0)
    }

    func testAFileWithABadLineGoesToFailedWithAReportAndNothingWritten() throws {
        try initStore()
        let agentProcess = try startAgent(runArguments())
        try drop("1-bad.ndjson", [#"{"uid":"a","value":1}"#, #"{"uid":"b","value":2}"#, #"{"uid":"c","value":"x"}"#])
        try drop("2-good.ndjson", [#"{"uid":"d","value":4}"#])
        XCTAssertTrue(eventually { files(in: processed) == ["2-good.ndjson"] && files(in: failed).count == 2 })
        XCTAssertEqual(files(in: failed), ["1-bad.ndjson", "1-bad.ndjson.error.txt"])
        let report = try String(contentsOf: failed.appendingPathComponent("1-bad.ndjson.error.txt"), encoding: .utf8)
        XCTAssertTrue(report.contains("line 3: field \"value\""), report)
        let transactions = try agentTransactions()
        XCTAssertEqual(transactions.count, 1, "only the good file was written")
        XCTAssertEqual((transactions.first?["inserted"] as? [String])?.count, 1)
        kill(agentProcess.processIdentifier, SIGTERM)
        agentProcess.waitUntilExit()
        XCTAssertEqual(agentProcess.terminationStatus, 0)
    }

    func testAShutdownPastItsDeadlineEndsTheProcessWithAFailureStatus() throws {
        // A part that never finishes stopping (as a database server that never answers would).
        let (stuck, _, log) = try startReadyAgent(["AMBAR_FAULT_INJECTION": "while-stopping"])
        kill(stuck.processIdentifier, SIGTERM)
        // The shutdown deadline (5 s) ends it; past 20 s the test fails (and its teardown kills it).
        XCTAssertTrue(eventually { !stuck.isRunning }, "the stuck shutdown was not ended")
        stuck.waitUntilExit()
        XCTAssertEqual(stuck.terminationReason, .exit)
        XCTAssertEqual(stuck.terminationStatus, 124, "a forced stop is not a clean exit")
        let logged = try String(contentsOf: log, encoding: .utf8)
        XCTAssertTrue(logged.contains("graceful shutdown did not finish within 5 s"), logged)
    }

    func testAnInboxThatCannotBeReadIsSaidAndStopsTheKeepAlives() throws {
        let (agentProcess, notify, log) = try startReadyAgent(["WATCHDOG_USEC": "300000"])
        // The inbox folder becomes something that cannot be listed (a file in its place).
        try FileManager.default.removeItem(at: inbox)
        XCTAssertTrue(FileManager.default.createFile(atPath: inbox.path, contents: Data("not a folder".utf8)))
        let deadline = Date().addingTimeInterval(20)
        var status: String?
        while status == nil, let message = notify.receive(until: deadline) {
            if message.contains("the inbox cannot be read") { status = message }
        }
        XCTAssertNotNil(status, "STATUS= says the inbox cannot be read")
        // Keep-alives were due every 150 ms; the loop stopped them before it said why, so none
        // comes after the status in the next second (ten would, had it gone on).
        var afterStatus: [String] = []
        let window = Date().addingTimeInterval(1)
        while let message = notify.receive(until: window) { afterStatus.append(message) }
        XCTAssertFalse(afterStatus.contains("WATCHDOG=1"), "keep-alives went on: \(afterStatus)")
        XCTAssertTrue(eventually { (try? String(contentsOf: log, encoding: .utf8))?.contains("the inbox cannot be read") == true }, "and the log")
        kill(agentProcess.processIdentifier, SIGTERM)
        agentProcess.waitUntilExit()
    }

    /// Starts `run` on a new store under a notify socket, with `environment` added, and waits for
    /// READY=1; the agent, the socket and the agent's log.
    private func startReadyAgent(_ environment: [String: String]) throws -> (Process, NotifySocket, URL) {
        try initStore()
        let notify = try NotifySocket(path: directory.url.appendingPathComponent("n.sock").path)
        let log = directory.url.appendingPathComponent("agent.log")
        let agentProcess = try startAgent(runArguments(), environment: environment.merging(["NOTIFY_SOCKET": notify.path]) { a, _ in a }, log: log)
        XCTAssertTrue(notify.receive(until: Date().addingTimeInterval(20))?.hasPrefix("READY=1") == true, "the agent got ready")
        return (agentProcess, notify, log)
    }

    func testReadinessComesAfterTheInboxIsWatched() throws {
        try initStore()
        let notify = try NotifySocket(path: directory.url.appendingPathComponent("n.sock").path)
        let agentProcess = try startAgent(runArguments(), environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "300000"])
        let deadline = Date().addingTimeInterval(20)
        let ready = notify.receive(until: deadline)
        XCTAssertTrue(ready?.hasPrefix("READY=1\nSTATUS=0 files imported") == true, ready ?? "nothing")
        XCTAssertTrue(FileManager.default.fileExists(atPath: inbox.path))
        XCTAssertEqual(notify.receive(until: deadline), "WATCHDOG=1", "keep-alives from the import loop")
        try drop("x.ndjson", [#"{"uid":"z","value":26}"#])
        var status: String?
        while status == nil, let message = notify.receive(until: deadline) {
            if message.contains("STATUS=1 files imported") { status = message }
        }
        XCTAssertNotNil(status, "STATUS= follows the imports")
        kill(agentProcess.processIdentifier, SIGTERM)
        var stopping = false
        while !stopping, let message = notify.receive(until: deadline) { stopping = message == "STOPPING=1" }
        XCTAssertTrue(stopping)
        agentProcess.waitUntilExit()
        XCTAssertEqual(agentProcess.terminationStatus, 0)
    }
}
