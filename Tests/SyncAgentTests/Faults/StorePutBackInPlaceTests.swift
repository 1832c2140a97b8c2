import AmbarStack
import AmbarTestSupport
import Foundation
import GRDBSQLite
import XCTest

/// A store put back to an earlier state by other means than `sync-agent restore` — SQLite's own
/// `.restore`, in place, the same file — while a durable consumer and a sharing process run past
/// its head. The tokens after the head will name other transactions: neither waits in silence for
/// them. The consumer stops at once with a typed error; the sharing process reads every object
/// again and says so.
final class StorePutBackInPlaceTests: AgentTestCase {
    /// A copy of the store as it is now, made by SQLite (`VACUUM INTO`).
    private func snapshot(to file: URL) throws {
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open_v2(store.path, &db, SQLITE_OPEN_READWRITE, nil), SQLITE_OK)
        defer { sqlite3_close_v2(db) }
        XCTAssertEqual(sqlite3_exec(db, "VACUUM INTO '\(file.path)'", nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(db)))
    }

    /// Writes `file` over the store in place through SQLite's online backup (what `sqlite3 STORE
    /// ".restore FILE"` does): the same file, holding an earlier state.
    private func putBack(from file: URL) throws {
        var source: OpaquePointer?
        var target: OpaquePointer?
        XCTAssertEqual(sqlite3_open_v2(file.path, &source, SQLITE_OPEN_READONLY, nil), SQLITE_OK)
        defer { sqlite3_close_v2(source) }
        XCTAssertEqual(sqlite3_open_v2(store.path, &target, SQLITE_OPEN_READWRITE, nil), SQLITE_OK)
        defer { sqlite3_close_v2(target) }
        sqlite3_busy_timeout(target, 10_000)
        let backup = try XCTUnwrap(sqlite3_backup_init(target, "main", source, "main"), String(cString: sqlite3_errmsg(target)))
        XCTAssertEqual(sqlite3_backup_step(backup, -1), SQLITE_DONE, String(cString: sqlite3_errmsg(target)))
        XCTAssertEqual(sqlite3_backup_finish(backup), SQLITE_OK)
    }

    private func position(_ coordinator: PersistentStoreCoordinator) throws -> Int64 {
        try coordinator.historyCursor(consumer: "printer")?.token ?? -1
    }

    func testAConsumerAndASharingProcessPastTheHeadAreToldAtOnce() throws {
        try initStore()
        let writer = try Peer("writer", directory: directory, store: store)
        defer { writer.kill() }
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
        XCTAssertTrue(try writer.send("burst 5 early-").hasPrefix("ok "))
        let earlyHead = try coordinator.currentHistoryToken()

        let consumerLog = directory.url.appendingPathComponent("consumer.log")
        let consumer = try startAgent(
            ["watch", "--directory", directory.url.path, "--consumer", "printer", "--from", "oldest", "--json"], log: consumerLog)
        XCTAssertTrue(try eventually(timeout: 30) { try self.position(coordinator) >= earlyHead }, "the consumer handled the first burst")
        let early = directory.url.appendingPathComponent("early.sqlite")
        try snapshot(to: early)

        let mergesFile = directory.url.appendingPathComponent("merges.ndjson")
        _ = FileManager.default.createFile(atPath: mergesFile.path, contents: nil)
        let sharing = try startAgent(["watch", "--directory", directory.url.path, "--json"], output: try FileHandle(forWritingTo: mergesFile))
        // Following once it prints a merge.
        XCTAssertTrue(
            try eventually(timeout: 30) {
                _ = try writer.send("insert probe-\(UUID().uuidString.prefix(6)) 1")
                return try String(contentsOf: mergesFile, encoding: .utf8).contains("\"token\"")
            }, "the sharing process follows the ledger")
        XCTAssertTrue(try writer.send("burst 20 late-").hasPrefix("ok "))
        let lateHead = try coordinator.currentHistoryToken()
        XCTAssertTrue(try eventually(timeout: 30) { try self.position(coordinator) >= lateHead }, "the consumer handled the second burst")

        try putBack(from: early)
        XCTAssertEqual(try coordinator.currentHistoryToken(), earlyHead, "the store is back at its earlier head")

        XCTAssertTrue(eventually(timeout: 30) { !consumer.isRunning }, "the consumer stops at once instead of waiting past the head")
        if !consumer.isRunning { XCTAssertNotEqual(consumer.terminationStatus, 0) }
        let log = try String(contentsOf: consumerLog, encoding: .utf8)
        XCTAssertTrue(log.contains("past the ledger's head \(earlyHead)"), log)
        XCTAssertTrue(
            try eventually(timeout: 30) {
                try String(contentsOf: mergesFile, encoding: .utf8).split(separator: "\n").contains { line in
                    (try? self.json(line))?["history_expired"] as? Bool == true
                }
            }, "the sharing process read every object again and said so")
        XCTAssertTrue(sharing.isRunning, "and goes on")
    }

    /// A change-stream client of `serve` on the stream that began at the head: every line it
    /// reads, then "ended" when the server ends the response.
    private static let streamClient = """
        import http.client, sys
        connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=120)
        connection.request("GET", "/v1/changes")
        response = connection.getresponse()
        print("status", response.status, flush=True)
        while True:
            line = response.readline()
            if not line:
                break
            sys.stdout.write(line.decode())
            sys.stdout.flush()
        print("ended", flush=True)
        """

    func testAnOpenChangeStreamPastTheHeadEndsWithAnExpiry() throws {
        try initStore()
        let writer = try Peer("writer", directory: directory, store: store)
        defer { writer.kill() }
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
        XCTAssertTrue(try writer.send("burst 5 early-").hasPrefix("ok "))
        let earlyHead = try coordinator.currentHistoryToken()
        let early = directory.url.appendingPathComponent("early.sqlite")
        try snapshot(to: early)

        let (_, port, serveLog) = try startServe(["--listen", "127.0.0.1:0"])
        let script = directory.url.appendingPathComponent("client.py")
        try Data(Self.streamClient.utf8).write(to: script)
        let received = directory.url.appendingPathComponent("stream.txt")
        _ = FileManager.default.createFile(atPath: received.path, contents: nil)
        let client = try startAgent(
            ["client"], executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", "-u", script.path, String(port)],
            output: try FileHandle(forWritingTo: received))
        func text() -> String { (try? String(contentsOf: received, encoding: .utf8)) ?? "" }
        XCTAssertTrue(eventually(timeout: 30) { text().contains("id: \(earlyHead)\n") }, "the stream begins at the head: \(text())")
        XCTAssertTrue(try writer.send("burst 20 late-").hasPrefix("ok "))
        let lateHead = try coordinator.currentHistoryToken()
        XCTAssertTrue(eventually(timeout: 30) { text().contains("id: \(lateHead)\n") }, "the stream follows: \(text().suffix(300))")

        try putBack(from: early)
        XCTAssertTrue(eventually(timeout: 30) { text().contains("ended\n") }, "the stream ends instead of waiting past the head: \(text().suffix(300))")
        let lines = text().split(separator: "\n")
        let expired = try XCTUnwrap(lines.firstIndex(of: "event: expired"), text())
        let data = try json(lines[expired + 1].dropFirst("data: ".count))
        XCTAssertEqual(data["head_token"] as? Int, Int(earlyHead), "\(data)")
        XCTAssertEqual(data["after"] as? Int, Int(lateHead), "\(data)")
        XCTAssertTrue((data["error"] as? String)?.contains("past the ledger's head") == true, "\(data)")
        XCTAssertFalse(lines[(expired + 2)...].contains { $0.hasPrefix("id: ") }, "nothing after the expiry: \(text().suffix(300))")
        XCTAssertTrue(eventually(timeout: 10) { !client.isRunning })
        XCTAssertTrue(
            ((try? String(contentsOf: serveLog, encoding: .utf8)) ?? "").contains("the ledger's head went back"),
            "serve says why its streams ended")
    }
}
