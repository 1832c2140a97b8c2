import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// The hub's socket file removed while the process serving the hub lives (an operator's `rm`, a
/// cleanup of the directory): the hub binds it again, so processes started later find it and
/// `status` reports it, instead of everyone polling the ledger until that process exits.
final class RemovedSocketTests: AgentTestCase {
    private func hub() throws -> [String: Any] {
        let status = try agent(["status", "--json", "--directory", directory.url.path])
        XCTAssertEqual(status.status, 0, status.error)
        return try XCTUnwrap(try json(status.output)["hub"] as? [String: Any])
    }

    func testARemovedHubSocketIsBoundAgainByTheProcessServingTheHub() throws {
        try initStore()
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock")
        let output = directory.url.appendingPathComponent("watch.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let log = directory.url.appendingPathComponent("watch.log")
        let watch = try startAgent(["watch", "--json", "--directory", directory.url.path], output: try FileHandle(forWritingTo: output), log: log)
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: socket.path) }, "watch serves the hub")
        XCTAssertEqual(try hub()["pid"] as? Int, Int(watch.processIdentifier))

        for round in 1...3 {
            try FileManager.default.removeItem(at: socket)
            XCTAssertTrue(eventually(timeout: 10) { FileManager.default.fileExists(atPath: socket.path) }, "round \(round): the socket file is back")
            let hub = try hub()
            XCTAssertEqual(hub["reachable"] as? Bool, true, "round \(round): \(hub)")
            XCTAssertEqual(hub["pid"] as? Int, Int(watch.processIdentifier), "round \(round): served by the same process")
        }
        // The whole directory removed: made again too.
        try FileManager.default.removeItem(at: socket.deletingLastPathComponent())
        XCTAssertTrue(eventually(timeout: 10) { FileManager.default.fileExists(atPath: socket.path) }, "the socket's directory and file are back")

        // A process started now rings the hub's bell: watch prints its change.
        let items = directory.url.appendingPathComponent("items.ndjson")
        try #"{"uid":"a","value":1}"#.write(to: items, atomically: true, encoding: .utf8)
        XCTAssertEqual(try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", items.path]).status, 0)
        XCTAssertTrue(eventually(timeout: 30) { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("Item") }, "watch saw the import")
        let text = try String(contentsOf: log, encoding: .utf8)
        XCTAssertTrue(text.contains("bound it again"), text)
        kill(watch.processIdentifier, SIGTERM)
        watch.waitUntilExit()
        XCTAssertEqual(watch.terminationStatus, 0)
    }
}
