import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Drives the built `sync-agent` binary as a user would.
final class AgentCommandTests: AgentTestCase {
    func testInitStatusAndHistory() throws {
        try initStore()
        let status = try agent(["status", "--directory", directory.url.path, "--json"])
        XCTAssertEqual(status.status, 0)
        let facts = try json(status.output)
        XCTAssertEqual(facts["head_token"] as? Int, 0)
        XCTAssertEqual((facts["objects"] as? [String: Int])?["Item"], 0)
        XCTAssertEqual((facts["hub"] as? [String: Any])?["reachable"] as? Bool, false)
        XCTAssertEqual(try agent(["history", "--directory", directory.url.path, "--json"]).output, "")
        let missing = try agent(["status", "--directory", directory.url.appendingPathComponent("nope").path])
        XCTAssertNotEqual(missing.status, 0, "a missing store is an error, not a crash")
    }

    func testBackupWritesACheckedCopyAndNeverOverwrites() throws {
        try initStore()
        let copy = directory.url.appendingPathComponent("copy.sqlite").path
        let made = try agent(["backup", "--directory", directory.url.path, "--to", copy, "--json"])
        XCTAssertEqual(made.status, 0, made.error)
        XCTAssertEqual(try json(made.output)["integrity"] as? String, "ok")
        XCTAssertEqual(try PersistentStoreCoordinator.storedModel(at: URL(fileURLWithPath: copy)).versionHash, try itemModel().versionHash)
        let again = try agent(["backup", "--directory", directory.url.path, "--to", copy])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.error.contains("never overwrites"), again.error)
    }

    func testHubServesAndStopsCleanlyOnSIGTERM() throws {
        try initStore()
        let hub = Process()
        hub.executableURL = BuiltProducts.url("sync-agent")
        hub.arguments = ["hub", "--directory", directory.url.path]
        hub.standardOutput = FileHandle.nullDevice
        hub.standardError = FileHandle.nullDevice
        try hub.run()
        defer {
            if hub.isRunning {
                kill(hub.processIdentifier, SIGKILL)
                hub.waitUntilExit()
            }
        }
        var hubFacts: [String: Any]?
        let reachable = try eventually {
            hubFacts = try json(try agent(["status", "--directory", directory.url.path, "--json"]).output)["hub"] as? [String: Any]
            return hubFacts?["reachable"] as? Bool == true
        }
        XCTAssertTrue(reachable, "status never reached the hub: \(hubFacts ?? [:])")
        XCTAssertEqual(hubFacts?["pid"] as? Int, Int(hub.processIdentifier))
        // A process sharing the store uses the daemon instead of electing its own hub.
        let peer = try Peer("peer", directory: directory, store: store)
        defer { peer.kill() }
        XCTAssertTrue(try peer.await("status") { $0.contains("connected=true") }.contains("hub=false"))
        // The hub lists its peers, with what it relayed to them.
        let token = Int(try peer.send("insert listed 1").dropFirst("ok ".count)) ?? -1
        var listed: [String: Any]?
        XCTAssertTrue(
            try eventually {
                let facts = try json(try agent(["status", "--directory", directory.url.path, "--json"]).output)
                let peers = (facts["hub"] as? [String: Any])?["peers"] as? [[String: Any]] ?? []
                XCTAssertFalse(peers.contains { $0["name"] as? String == "sync-agent status" }, "the status command itself is not listed")
                listed = peers.first { $0["pid"] as? Int == Int(peer.process.processIdentifier) }
                return listed?["last_token"] as? Int == token
            }, "the hub lists the peer with the token it relayed: \(listed ?? [:])")
        kill(hub.processIdentifier, SIGTERM)
        hub.waitUntilExit()
        XCTAssertEqual(hub.terminationReason, .exit)
        XCTAssertEqual(hub.terminationStatus, 0)
    }

    /// `status` lists each inbox (hidden files not counted, reports not counted as files) and each
    /// consumer's lag in transactions and seconds, in its JSON and in its lines.
    func testStatusReportsInboxesAndEachConsumersLag() throws {
        try initStore()
        let dir = directory.url.path
        let folders = [
            ("inbox/orders", ["a.ndjson", ".b.ndjson.part"]), ("processed/orders", ["x.ndjson"]), ("failed/orders", ["y.ndjson", "y.ndjson.error.txt"]),
        ]
        for (folder, files) in folders {
            let url = directory.url.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for file in files { try "{}".write(to: url.appendingPathComponent(file), atomically: true, encoding: .utf8) }
        }
        // A durable consumer that stopped; then two transactions it has not read.
        let consumer = try startAgent(["watch", "--directory", dir, "--consumer", "alerts", "--json"])
        func cursors() throws -> [[String: Any]] { try json(try agent(["status", "--directory", dir, "--json"]).output)["cursors"] as? [[String: Any]] ?? [] }
        XCTAssertTrue(try eventually(timeout: 30) { try cursors().contains { $0["consumer"] as? String == "alerts" } }, "the consumer records its position")
        kill(consumer.processIdentifier, SIGTERM)
        consumer.waitUntilExit()
        let records = directory.url.appendingPathComponent("records.ndjson")
        try "{\"uid\":\"a\",\"value\":1}\n{\"uid\":\"b\",\"value\":2}\n".write(to: records, atomically: true, encoding: .utf8)
        XCTAssertEqual(try agent(["import", "--directory", dir, "--entity", "Item", "--key", "uid", "--batch-size", "1", records.path]).status, 0)

        let status = try json(try agent(["status", "--directory", dir, "--json"]).output)
        let inboxes = try XCTUnwrap(status["inboxes"] as? [[String: Any]])
        XCTAssertEqual(inboxes.count, 1)
        XCTAssertEqual(inboxes.first?["name"] as? String, "orders")
        XCTAssertEqual(inboxes.first?["waiting"] as? Int, 1, "the hidden file a writer is still writing is not counted")
        XCTAssertEqual(inboxes.first?["processed"] as? Int, 1)
        XCTAssertEqual(inboxes.first?["failed"] as? Int, 1, "a refused file, not its report")
        XCTAssertEqual(inboxes.first?["last_failed"] as? String, "y.ndjson")
        let alerts = try XCTUnwrap((status["cursors"] as? [[String: Any]])?.first { $0["consumer"] as? String == "alerts" })
        XCTAssertEqual(alerts["lag_tokens"] as? Int, 2)
        XCTAssertGreaterThan(alerts["lag_seconds"] as? Double ?? 0, 0)
        XCTAssertEqual(alerts["expired"] as? Bool, false)
        XCTAssertNil(inboxes.first?["error"] as? String, "every folder was read")
        let lines = try agent(["status", "--directory", dir]).output
        XCTAssertTrue(lines.contains("inbox      orders: 1 waiting, 1 processed, 1 failed (last: y.ndjson)"), lines)
        XCTAssertTrue(lines.contains("cursor     alerts (consumer) at 0, 2 behind"), lines)
    }

    func testWatchShowsExactlyTheTokensAnotherProcessCommitted() throws {
        try initStore()
        let watch = Process()
        watch.executableURL = BuiltProducts.url("sync-agent")
        watch.arguments = ["watch", "--directory", directory.url.path, "--json"]
        let output = Pipe()
        watch.standardOutput = output
        watch.standardError = FileHandle.nullDevice
        try watch.run()
        defer {
            if watch.isRunning {
                kill(watch.processIdentifier, SIGKILL)
                watch.waitUntilExit()
            }
        }
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: socket) }, "watch serves the hub")
        let writer = try Peer("writer", directory: directory, store: store)
        defer { writer.kill() }
        var committed: [Int] = []
        for command in ["insert x 1", "insert y 2", "update x 3", "delete y"] {
            let answer = try writer.send(command)
            committed.append(Int(answer.dropFirst("ok ".count)) ?? -1)
        }
        var reader = LineReader(output.fileHandleForReading)
        var lines: [Substring] = []
        let deadline = Date().addingTimeInterval(20)
        while lines.count < committed.count, let line = reader.next(until: deadline) { lines.append(Substring(line)) }
        let events = try lines.map(json)
        guard events.count == committed.count else { return XCTFail("watch printed \(lines), expected tokens \(committed)") }
        XCTAssertEqual(events.compactMap { $0["token"] as? Int }, committed)
        XCTAssertEqual((events.first?["inserted"] as? [String])?.count, 1)
        XCTAssertTrue((events[2]["updated"] as? [String])?.first?.hasSuffix("/Item/p1") == true)
        XCTAssertEqual((events[3]["deleted"] as? [String])?.count, 1)
        XCTAssertNotNil(events.first?["latency_ms"] as? Double)
        XCTAssertEqual(events.first?["pid"] as? Int, Int(writer.process.processIdentifier))
        kill(watch.processIdentifier, SIGTERM)
        watch.waitUntilExit()
        XCTAssertEqual(watch.terminationStatus, 0)
        let history = try agent(["history", "--directory", directory.url.path, "--json"]).output.split(separator: "\n")
        XCTAssertEqual(try history.map(json).compactMap { $0["token"] as? Int }, committed)
    }
}
