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
}
