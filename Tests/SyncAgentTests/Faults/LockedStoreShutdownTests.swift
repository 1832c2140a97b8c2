import AmbarTestSupport
import Foundation
import XCTest

/// Another SQLite client holds the store's write lock (a long transaction, a backup tool, an
/// `sqlite3` shell left in `BEGIN IMMEDIATE`) when SIGTERM comes: `watch` still stops gracefully
/// and at once. Its merge position is bookkeeping: recording or removing it waits for the lock
/// one second at most, not the store's ten-second busy timeout, which outlasted the five-second
/// shutdown deadline (the process then exited with status 124).
final class LockedStoreShutdownTests: AgentTestCase {
    /// A python3 process that takes the store's write lock and keeps it until killed; returns once
    /// it holds the lock.
    private func holdWriteLock() throws -> Process {
        let script = """
            import sqlite3, sys, time
            connection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
            connection.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            time.sleep(600)
            """
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = ["-c", script, store.path]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        addTeardownBlock {
            if holder.isRunning {
                kill(holder.processIdentifier, SIGKILL)
                holder.waitUntilExit()
            }
        }
        // Blocks until the line comes, or until the process ends without it (end of file).
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        XCTAssertTrue(said.hasPrefix("locked"), "the lock holder did not take the lock: \(said)")
        return holder
    }

    func testSIGTERMStopsWatchGracefullyWhileAnotherClientHoldsTheWriteLock() throws {
        try initStore()
        let output = directory.url.appendingPathComponent("watch.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let log = directory.url.appendingPathComponent("watch.log")
        let watch = try startAgent(["watch", "--json", "--directory", directory.url.path], output: try FileHandle(forWritingTo: output), log: log)
        // watch merges an import and records its position (a write) after it.
        // Until watch has started: a new value each time, so that each import is a transaction.
        let items = directory.url.appendingPathComponent("items.ndjson")
        var value = 0
        XCTAssertTrue(
            try eventually(timeout: 30, every: 0.5) {
                value += 1
                try #"{"uid":"a","value":\#(value)}"#.write(to: items, atomically: true, encoding: .utf8)
                XCTAssertEqual(try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", items.path]).status, 0)
                return ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("Item")
            }, "watch merges an import")
        // Its merge position (named "sync-agent-<pid>-<instance>") is recorded after the merge.
        let position = "sync-agent-\(watch.processIdentifier)-"
        XCTAssertTrue(
            try eventually(timeout: 30, every: 0.2) { try agent(["consumers", "--directory", directory.url.path]).output.contains(position) },
            "watch records its merge position")

        let holder = try holdWriteLock()
        kill(watch.processIdentifier, SIGTERM)
        XCTAssertTrue(eventually(timeout: 60) { !watch.isRunning }, "watch ended after SIGTERM")
        watch.waitUntilExit()
        let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        XCTAssertTrue(holder.isRunning, "watch ended while the write lock was still held, without waiting for it")
        XCTAssertEqual(watch.terminationReason, .exit)
        XCTAssertEqual(watch.terminationStatus, 0, "a graceful stop, not the shutdown deadline's 124:\n\(logged)")
        XCTAssertFalse(logged.contains("graceful shutdown did not finish"), logged)
        // The position could not be removed: said so, and left to purging once its lease runs out.
        XCTAssertTrue(logged.contains("could not remove the merge position at stop"), logged)

        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        let left = try agent(["consumers", "--directory", directory.url.path])
        XCTAssertEqual(left.status, 0, left.error)
        XCTAssertTrue(left.output.contains(position), "the position stays until its lease runs out:\n\(left.output)")
    }
}
