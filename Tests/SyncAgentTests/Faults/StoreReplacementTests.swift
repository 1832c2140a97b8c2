import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// The store file replaced under running processes: by an operator's `mv` of a backup, or by
/// `sync-agent restore`. Every process stops trusting the old file — `watch` and `run` exit
/// non-zero, nothing is written to the replaced file, and an inbox file moves to processed only
/// once its transaction is in the store at the path.
final class StoreReplacementTests: AgentTestCase {
    var inbox: URL { directory.url.appendingPathComponent("inbox/alpha") }
    var processed: URL { directory.url.appendingPathComponent("processed/alpha") }

    private func runArguments() -> [String] {
        ["run", "--name", "alpha", "--entity", "Item", "--key", "uid", "--directory", directory.url.path, "--poll-interval", "50"]
    }

    private func drop(_ name: String, _ line: String) throws {
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let temporary = inbox.appendingPathComponent(".\(name).part")
        try (line + "\n").write(to: temporary, atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(temporary.path, inbox.appendingPathComponent(name).path), 0)
    }

    private func files(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    private func uids() throws -> [String] {
        let result = try agent(["fetch", "--directory", directory.url.path, "--entity", "Item", "--json"])
        XCTAssertEqual(result.status, 0, result.error)
        return try result.output.split(separator: "\n").compactMap { try json($0)["uid"] as? String }.sorted()
    }

    /// Whether process `pid` shares the store: it serves the hub or is one of its peers.
    private func isSharing(_ pid: Int32) -> Bool {
        guard let status = try? agent(["status", "--json", "--directory", directory.url.path]), let report = try? json(status.output),
            let hub = report["hub"] as? [String: Any]
        else { return false }
        return hub["pid"] as? Int == Int(pid) || ((hub["peers"] as? [[String: Any]]) ?? []).contains { $0["pid"] as? Int == Int(pid) }
    }

    /// Waits for `process` to exit; returns its status (nil if it did not within `timeout`).
    private func exitStatus(_ process: Process, timeout: TimeInterval = 20) -> Int32? {
        guard eventually(timeout: timeout, { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    private func importItem(_ uid: String) throws {
        let file = directory.url.appendingPathComponent("\(uid).ndjson")
        try #"{"uid":"\#(uid)","value":1}"#.write(to: file, atomically: true, encoding: .utf8)
        let result = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", file.path])
        XCTAssertEqual(result.status, 0, result.error)
    }

    /// The defect: `run` imported an inbox file into the deleted file, logged "imported" and
    /// moved the file to processed: the data was gone.
    func testAStoreReplacedWithMvStopsEveryProcessAndNoInboxFileIsLost() throws {
        try initStore()
        try importItem("before-backup")
        let backup = directory.url.appendingPathComponent("backup.sqlite")
        XCTAssertEqual(try agent(["backup", "--directory", directory.url.path, "--to", backup.path]).status, 0)
        try importItem("after-backup")

        let runLog = directory.url.appendingPathComponent("run.log")
        let run = try startAgent(runArguments(), log: runLog)
        XCTAssertTrue(eventually { ((try? String(contentsOf: runLog, encoding: .utf8)) ?? "").contains("ready") }, "run is up on the store")
        let watchLog = directory.url.appendingPathComponent("watch.log")
        let watch = try startAgent(["watch", "--directory", directory.url.path], log: watchLog)
        XCTAssertTrue(eventually { isSharing(run.processIdentifier) && isSharing(watch.processIdentifier) }, "run and watch share the store")
        try drop("one.ndjson", #"{"uid":"one","value":1}"#)
        XCTAssertTrue(eventually { files(in: processed) == ["one.ndjson"] }, "the runner works")

        // The operator restores by hand, under the running processes: the store's files removed,
        // the backup moved into place.
        for suffix in ["", "-wal", "-shm"] { unlink(store.path + suffix) }
        XCTAssertEqual(rename(backup.path, store.path), 0)
        try drop("two.ndjson", #"{"uid":"two","value":2}"#)
        XCTAssertEqual(exitStatus(watch).map { $0 != 0 }, true, "watch exits non-zero: \((try? String(contentsOf: watchLog, encoding: .utf8)) ?? "")")
        XCTAssertEqual(exitStatus(run).map { $0 != 0 }, true, "run exits non-zero: \((try? String(contentsOf: runLog, encoding: .utf8)) ?? "")")
        XCTAssertTrue(try String(contentsOf: watchLog, encoding: .utf8).contains("no longer the store this process opened"))
        XCTAssertFalse(files(in: processed).contains("two.ndjson"), "a file not in the store at the path is not moved to processed")

        // Restarted (as systemd would), the runner imports it into the store now at the path.
        let restarted = try startAgent(runArguments())
        XCTAssertTrue(eventually { files(in: processed).contains("two.ndjson") }, "imported after the restart")
        XCTAssertEqual(try uids(), ["before-backup", "two"], "the restored store and the file; nothing written to the replaced one counts")
        kill(restarted.processIdentifier, SIGTERM)
        XCTAssertEqual(exitStatus(restarted), 0)
    }

    /// `sync-agent restore` under a running runner and a durable consumer: both stop, the old
    /// store is kept aside, restore finds no process left on it, and after restarting the
    /// consumer reconciles once (its position is expired) and then follows the restored ledger.
    func testRestoreReplacesTheStoreWhileAgentsRunAndConsumersReconcile() throws {
        try initStore()
        let consumerOutput = directory.url.appendingPathComponent("consumer.out")
        _ = FileManager.default.createFile(atPath: consumerOutput.path, contents: nil)
        let consumer = try startAgent(
            ["watch", "--directory", directory.url.path, "--consumer", "audit", "--from", "oldest", "--json"],
            output: try FileHandle(forWritingTo: consumerOutput))
        func consumed() -> Int { ((try? String(contentsOf: consumerOutput, encoding: .utf8)) ?? "").split(separator: "\n").count }
        try importItem("kept")
        XCTAssertTrue(eventually { consumed() == 1 }, "the consumer read the first transaction (its position is in the backup)")
        let backup = directory.url.appendingPathComponent("backup.sqlite")
        XCTAssertEqual(try agent(["backup", "--directory", directory.url.path, "--to", backup.path]).status, 0)
        try importItem("lost")
        XCTAssertTrue(eventually { consumed() == 2 })
        let runLog = directory.url.appendingPathComponent("run.log")
        let run = try startAgent(runArguments(), log: runLog)
        XCTAssertTrue(eventually { ((try? String(contentsOf: runLog, encoding: .utf8)) ?? "").contains("ready") }, "run is up on the store")

        let other = directory.url.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let restored = try agent(["restore", "--directory", directory.url.path, "--from", backup.path, "--json"], timeout: 60)
        XCTAssertEqual(restored.status, 0, restored.error)
        let report = try json(restored.output)
        XCTAssertEqual(report["still_open_by"] as? [Int], [], "every process let go of the replaced store: \(report)")
        let kept = try XCTUnwrap(report["kept_aside"] as? String)
        XCTAssertTrue(FileManager.default.fileExists(atPath: kept), "the replaced store is kept aside")
        XCTAssertEqual(
            exitStatus(run, timeout: 15).map { $0 != 0 }, true, "run exited non-zero: \((try? String(contentsOf: runLog, encoding: .utf8)) ?? "")")
        XCTAssertEqual(exitStatus(consumer, timeout: 15).map { $0 != 0 }, true, "the consumer exited non-zero")
        XCTAssertEqual(try uids(), ["kept"])

        // Another store's backup is refused, and nothing changes.
        let otherStore = AgentStores(directory: other)
        try otherStore.create(agent: self)
        let refused = try agent(["restore", "--directory", directory.url.path, "--from", otherStore.store.path])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.error.contains("another store"), refused.error)
        XCTAssertEqual(try uids(), ["kept"])

        // The consumer, restarted, reconciles once and follows the restored ledger.
        _ = FileManager.default.createFile(atPath: consumerOutput.path, contents: Data())
        let again = try startAgent(
            ["watch", "--directory", directory.url.path, "--consumer", "audit", "--json"], output: try FileHandle(forWritingTo: consumerOutput))
        XCTAssertTrue(eventually { ((try? String(contentsOf: consumerOutput, encoding: .utf8)) ?? "").contains("history_expired") }, "told to reconcile")
        try importItem("new")
        XCTAssertTrue(eventually { ((try? String(contentsOf: consumerOutput, encoding: .utf8)) ?? "").contains("Item") }, "then follows")
        let tokens = try String(contentsOf: consumerOutput, encoding: .utf8).split(separator: "\n").compactMap { try json($0)["token"] as? Int }
        XCTAssertGreaterThan(tokens.last ?? 0, (report["replaced_head"] as? Int) ?? .max, "no token of the replaced ledger is reused")
        kill(again.processIdentifier, SIGTERM)
        XCTAssertEqual(exitStatus(again), 0)
    }
}

/// A second store in its own directory, for a backup of another store.
private struct AgentStores {
    let directory: URL
    var store: URL { directory.appendingPathComponent("ambar.sqlite") }

    func create(agent test: AgentTestCase) throws {
        let model = directory.appendingPathComponent("model.json")
        try JSONEncoder().encode(try itemModel()).write(to: model)
        let result = try test.agent(["init", "--model", model.path, "--directory", directory.path])
        XCTAssertEqual(result.status, 0, result.error)
    }
}
