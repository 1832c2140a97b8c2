import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `sync-agent watch --consumer NAME` SIGKILLed and restarted while another process writes: every
/// transaction's line is printed, none missing; a line printed again carries the same token and
/// content. `sync-agent consumers` shows its position, kind and lag, and removes it.
final class WatchConsumerTests: AgentTestCase {
    private func startWatch(_ run: Int) throws -> (Process, URL) {
        let output = directory.url.appendingPathComponent("watch-\(run).ndjson")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = try startAgent(
            ["watch", "--directory", directory.url.path, "--consumer", "printer", "--from", "oldest", "--json"],
            output: try FileHandle(forWritingTo: output))
        return (process, output)
    }

    private func lines(_ file: URL) throws -> [[String: Any]] {
        let text = try String(contentsOf: file, encoding: .utf8)
        // A line cut by SIGKILL mid-write is the last one and is printed again by the next run.
        return text.split(separator: "\n").compactMap { try? json($0) }
    }

    func testAKilledConsumerMissesNoTransactionAndRepeatsOnlyWithTheSameToken() throws {
        try initStore()
        let writer = try Peer("writer", directory: directory, store: store)
        defer { writer.kill() }
        try writer.post("burst 1500 w-")

        var outputs: [URL] = []
        var generator = SystemRandomNumberGenerator()
        for run in 0..<8 {
            let (process, output) = try startWatch(run)
            outputs.append(output)
            usleep(UInt32.random(in: 200_000...700_000, using: &generator))
            XCTAssertTrue(process.isRunning, "watch run \(run) ran until killed")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        XCTAssertTrue(try writer.receive(timeout: 120).hasPrefix("ok "))

        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
        let expected = try coordinator.history(after: 0).filter { !$0.isEmpty }
        let last = Int(try XCTUnwrap(expected.last?.token))
        let (final, finalOutput) = try startWatch(8)
        outputs.append(finalOutput)
        // The last run goes on until the position passes the last transaction (its line printed
        // by it, or by an earlier run that recorded it).
        XCTAssertTrue(
            try eventually(timeout: 60) { try coordinator.historyCursor(consumer: "printer").map { $0.token >= last } ?? false },
            "the consumer's position passes the last transaction")
        // Ready for SIGTERM once it shares (its signal handling is in place by then): the hub lists it.
        XCTAssertTrue(
            try eventually(timeout: 30) {
                let status = try json(try agent(["status", "--directory", directory.url.path, "--json"]).output)
                let peers = (status["hub"] as? [String: Any])?["peers"] as? [[String: Any]] ?? []
                return peers.contains { $0["pid"] as? Int == Int(final.processIdentifier) }
            }, "the last run shares the store")
        kill(final.processIdentifier, SIGTERM)
        final.waitUntilExit()
        XCTAssertEqual(final.terminationStatus, 0, "SIGTERM stops it cleanly")

        var seen: [Int: [String]] = [:]
        for output in outputs {
            let runLines = try lines(output)
            let tokens = runLines.compactMap { $0["token"] as? Int }
            XCTAssertEqual(tokens, tokens.sorted(), "each run prints in token order")
            for line in runLines {
                guard let token = line["token"] as? Int, let inserted = line["inserted"] as? [String] else { return XCTFail("\(line)") }
                if let before = seen[token] { XCTAssertEqual(before, inserted, "a repeated line is the same transaction") }
                seen[token] = inserted
            }
        }
        XCTAssertEqual(Set(seen.keys), Set(expected.map { Int($0.token) }), "every transaction printed, none invented")
        for transaction in expected { XCTAssertEqual(seen[Int(transaction.token)], transaction.inserted.map(\.uriString).sorted()) }

        let listed = try agent(["consumers", "--directory", directory.url.path, "--json"])
        XCTAssertEqual(listed.status, 0, listed.error)
        let printer = try XCTUnwrap(try listed.output.split(separator: "\n").map(json).first { $0["consumer"] as? String == "printer" })
        XCTAssertEqual(printer["kind"] as? String, "consumer")
        let position = try XCTUnwrap(printer["token"] as? Int)
        // Past the last line, and past the empty maintenance markers after it, which it skips.
        XCTAssertGreaterThanOrEqual(position, last, "SIGTERM recorded the position after the last line")
        XCTAssertEqual(printer["lag_tokens"] as? Int, Int(try coordinator.currentHistoryToken()) - position)
        XCTAssertEqual(printer["expired"] as? Bool, false)

        let removed = try agent(["consumers", "--directory", directory.url.path, "--remove", "printer"])
        XCTAssertEqual(removed.status, 0, removed.error)
        XCTAssertNil(try coordinator.historyCursor(consumer: "printer"))
        let again = try agent(["consumers", "--directory", directory.url.path, "--remove", "printer"])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.error.contains("no position named 'printer'"), again.error)
    }
}
