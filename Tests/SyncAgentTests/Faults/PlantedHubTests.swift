import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A hub that is not ours: with the socket in a directory other users can write, a socket another
/// user planted there gets nothing — no `hello`, no did-save — from the store's processes; they
/// say why they refuse it, `status` reports it as refused (not as the hub), and changes still
/// reach the others through the ledger.
final class PlantedHubTests: AgentTestCase {
    /// Listens on argv[1] as whoever runs it, and appends the number of bytes each connection
    /// sends to argv[2] ("ready" once it listens).
    private static let listener = #"""
        import os, socket, sys, threading
        path, record = sys.argv[1], sys.argv[2]
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        os.chmod(path, 0o777)
        server.listen(64)
        with open(record, "a") as f:
            f.write("ready %d\n" % os.getpid())
        def serve(conn):
            total = 0
            conn.settimeout(30)
            try:
                while True:
                    data = conn.recv(65536)
                    if not data:
                        break
                    total += len(data)
            except OSError:
                pass
            with open(record, "a") as f:
                f.write("bytes %d\n" % total)
        while True:
            conn, _ = server.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        """#

    func testASocketPlantedByAnotherUserGetsNothingAndIsReportedAsRefused() throws {
        guard getuid() == 0 else { throw XCTSkip("planting a socket as another user (nobody) needs root to switch users (runuser)") }
        try initStore()
        // A directory every user can write (as /tmp is), reachable by nobody.
        chmod(directory.url.path, 0o755)
        let open = directory.url.appendingPathComponent("public")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: true)
        chmod(open.path, 0o1777)
        let socketPath = open.appendingPathComponent("hub.sock").path
        let record = open.appendingPathComponent("record")
        let script = open.appendingPathComponent("listener.py")
        try Self.listener.write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o644)
        // (SpawnedProcess, not Foundation's Process: runuser closes the descriptor Process
        // watches its children through.)
        let planted = try SpawnedProcess("/usr/sbin/runuser", ["-u", "nobody", "--", "/usr/bin/python3", script.path, socketPath, record.path])
        XCTAssertTrue(
            eventually { ((try? String(contentsOf: record, encoding: .utf8)) ?? "").contains("ready") || !planted.isRunning },
            "the planted listener runs as nobody")
        XCTAssertTrue(planted.isRunning)
        let listenerPID = try XCTUnwrap(
            ((try? String(contentsOf: record, encoding: .utf8)) ?? "").split(separator: "\n").first { $0.hasPrefix("ready ") }.flatMap {
                Int32($0.dropFirst("ready ".count))
            })
        defer {
            kill(listenerPID, SIGKILL)
            kill(planted.processIdentifier, SIGKILL)
            _ = planted.waitForExit(timeout: 10)
        }

        let status = try agent(["status", "--json", "--directory", directory.url.path, "--socket", socketPath])
        XCTAssertEqual(status.status, 0, status.error)
        let hub = try XCTUnwrap(try json(status.output)["hub"] as? [String: Any])
        XCTAssertEqual(hub["reachable"] as? Bool, false, "a planted socket is not presented as the hub")
        let refused = try XCTUnwrap(hub["refused"] as? String, "status says why it refused it: \(hub)")
        XCTAssertTrue(refused.contains("uid 65534"), refused)

        let watchOutput = directory.url.appendingPathComponent("watch.out")
        _ = FileManager.default.createFile(atPath: watchOutput.path, contents: nil)
        let watchLog = directory.url.appendingPathComponent("watch.log")
        let watch = try startAgent(
            ["watch", "--json", "--directory", directory.url.path, "--socket", socketPath], output: try FileHandle(forWritingTo: watchOutput), log: watchLog)
        XCTAssertTrue(
            eventually(timeout: 30) { ((try? String(contentsOf: watchLog, encoding: .utf8)) ?? "").contains("refusing the hub") },
            "watch refused the planted hub (and follows the ledger from here)")
        let items = directory.url.appendingPathComponent("items.ndjson")
        try #"{"uid":"a","value":1}"#.write(to: items, atomically: true, encoding: .utf8)
        let imported = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", items.path])
        XCTAssertEqual(imported.status, 0, imported.error)
        XCTAssertTrue(
            eventually(timeout: 30) { ((try? String(contentsOf: watchOutput, encoding: .utf8)) ?? "").contains("Item") },
            "the change reached watch through the ledger: \((try? String(contentsOf: watchLog, encoding: .utf8)) ?? "")")
        let log = try String(contentsOf: watchLog, encoding: .utf8)
        XCTAssertTrue(log.contains("refusing the hub") && log.contains("uid 65534"), log)
        XCTAssertEqual(log.components(separatedBy: "refusing the hub").count - 1, 1, "said once, not at every retry: \(log)")
        kill(watch.processIdentifier, SIGTERM)
        watch.waitUntilExit()

        kill(listenerPID, SIGTERM)
        XCTAssertNotNil(planted.waitForExit(timeout: 10), "the listener stopped")
        let received = ((try? String(contentsOf: record, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasPrefix("bytes ") }
        XCTAssertFalse(received.isEmpty, "processes did connect to the planted socket")
        XCTAssertEqual(Set(received), ["bytes 0"], "and sent it nothing")
    }
}
