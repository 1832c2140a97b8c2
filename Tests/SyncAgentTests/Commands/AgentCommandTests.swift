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
        var reachable = false
        for _ in 0..<200 where !reachable {
            let status = try agent(["status", "--directory", directory.url.path, "--json"])
            let facts = try json(status.output)
            let hubFacts = facts["hub"] as? [String: Any]
            reachable = hubFacts?["reachable"] as? Bool == true
            if reachable { XCTAssertEqual(hubFacts?["pid"] as? Int, Int(hub.processIdentifier)) } else { usleep(20_000) }
        }
        XCTAssertTrue(reachable)
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
