import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// A hub message is a doorbell, the ledger the truth: a peer admitted to the hub that sends a
/// forged, stale or replayed did-save can never make `sync-agent watch` report a transaction the
/// ledger does not hold, nor skip one it does.
final class ForgedMessageTests: AgentTestCase {
    func testForgedAndReplayedDidSavesAreNeverReportedAndNeverHideTheRealTransaction() throws {
        try initStore()
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        _ = try startAgent(["hub", "--directory", directory.url.path])
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: socket) }, "the hub binds its socket")
        let output = Pipe()
        let watch = try startAgent(["watch", "--directory", directory.url.path, "--json"], output: output)
        XCTAssertTrue(try eventually { try hubPeerIDs().contains(Int(watch.processIdentifier)) }, "the watcher is connected to the hub")

        let coordinator = try PersistentStoreCoordinator(model: try PersistentStoreCoordinator.storedModel(at: store), store: .sqlite(store))
        let uuid = try XCTUnwrap(UUID(uuidString: coordinator.storeIdentifier))
        let head = try coordinator.currentHistoryToken()
        let forger = try RawPeer(socket)
        defer { forger.close() }
        try forger.write(try WireFormat.encode(.hello(.init(storeUUID: uuid, processID: 4242, instanceID: 99, processName: "forger", cursor: head))))
        guard case .welcome? = try forger.readFrame() else { return XCTFail("the hub did not admit the raw peer") }
        // The next token, naming deletions the ledger will never hold.
        let forged = Frame.didSave(
            .init(
                storeUUID: uuid, token: head + 1, processID: 4242, instanceID: 99, author: "forger",
                changes: ["Item": .init(deleted: [1, 2, 3])]))
        try forger.write(try WireFormat.encode(forged))
        // A token far ahead, too.
        try forger.write(try WireFormat.encode(.tokenOnly(storeUUID: uuid, token: head + 1_000, processID: 4242, instanceID: 99)))
        // The hub relays in order: once it answers a ping sent after them, the forged frames are
        // on their way to the watcher, ahead of the real transaction's doorbell.
        try relayed(through: forger)

        var reader = LineReader(output.fileHandleForReading)
        let first = try importOne(uid: "real-1")
        XCTAssertEqual(first, [Int(head) + 1], "the import took the token the forged frame named")
        let reported = try readEvents(&reader, untilToken: first[0])
        XCTAssertEqual(reported.compactMap { $0["token"] as? Int }, first, "exactly the real transaction, once: \(reported)")
        XCTAssertEqual((reported.first?["inserted"] as? [String])?.count, 1)
        XCTAssertEqual((reported.first?["deleted"] as? [String])?.count, 0, "nothing of the forged frame")
        XCTAssertEqual(reported.first?["author"] as? String, "sync-agent import")

        // Replays of the forged frame and of a stale token, then another real transaction.
        try forger.write(try WireFormat.encode(forged))
        try forger.write(
            try WireFormat.encode(
                .didSave(
                    .init(
                        storeUUID: uuid, token: head + 2, processID: 4242, instanceID: 99, author: "forger",
                        changes: ["Item": .init(updated: [1])]))))
        try relayed(through: forger)
        let second = try importOne(uid: "real-2")
        XCTAssertEqual(second, [Int(head) + 2])
        let next = try readEvents(&reader, untilToken: second[0])
        XCTAssertEqual(next.compactMap { $0["token"] as? Int }, second, "the second real transaction, once: \(next)")
        XCTAssertEqual((next.first?["inserted"] as? [String])?.count, 1)
        XCTAssertEqual((next.first?["updated"] as? [String])?.count, 0)

        kill(watch.processIdentifier, SIGTERM)
        watch.waitUntilExit()
        XCTAssertEqual(watch.terminationStatus, 0)
    }

    /// Pings the hub through `peer` and waits for the pong: everything `peer` sent before was
    /// relayed by then (the hub handles a connection's frames in order).
    private func relayed(through peer: RawPeer) throws {
        try peer.write(try WireFormat.encode(.ping(77)))
        while let frame = try peer.readFrame(timeout: 10) {
            if frame == .pong(77) { return }
        }
        XCTFail("the hub did not answer the ping")
    }

    /// Imports one item through `sync-agent import`; returns the tokens it committed.
    private func importOne(uid: String) throws -> [Int] {
        let file = directory.url.appendingPathComponent("\(uid).ndjson")
        try Data(#"{"uid":"\#(uid)","value":1}"#.utf8).write(to: file)
        let result = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", "--json", file.path])
        XCTAssertEqual(result.status, 0, result.error)
        return try XCTUnwrap(try json(result.output)["tokens"] as? [Int])
    }

    /// The watcher's events up to and including the one for `token` (fails after 20 s without it).
    private func readEvents(_ reader: inout LineReader, untilToken token: Int) throws -> [[String: Any]] {
        var events: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(20)
        while let line = reader.next(until: deadline) {
            let event = try json(Substring(line))
            events.append(event)
            if event["token"] as? Int == token { return events }
        }
        XCTFail("the watcher never reported token \(token); it printed \(events)")
        return events
    }

    /// The PIDs of the processes the hub serves, from `sync-agent status --json`.
    private func hubPeerIDs() throws -> [Int] {
        let facts = try json(try agent(["status", "--directory", directory.url.path, "--json"]).output)
        return ((facts["hub"] as? [String: Any])?["peers"] as? [[String: Any]] ?? []).compactMap { $0["pid"] as? Int }
    }
}
