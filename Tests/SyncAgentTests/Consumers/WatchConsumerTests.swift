import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `sync-agent watch --consumer NAME` SIGKILLed and restarted while another process writes: every
/// transaction's line is printed, none missing; a line printed again carries the same token and
/// content. `sync-agent consumers` shows its position, kind and lag, and removes it.
final class WatchConsumerTests: AgentTestCase {
    /// Starts `watch --consumer printer`; a short lease (`--lease 0.3`) lets a run started after
    /// a SIGKILL take over at once, so that each of the many runs prints.
    private func startWatch(_ run: Int, lease: Double = 0.3) throws -> (Process, URL) {
        let output = directory.url.appendingPathComponent("watch-\(run).ndjson")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = try startAgent(
            ["watch", "--directory", directory.url.path, "--consumer", "printer", "--from", "oldest", "--json", "--lease", String(lease)],
            output: try FileHandle(forWritingTo: output), log: watchLog(run))
        return (process, output)
    }

    /// Where run `run` of `watch` writes its standard error.
    private func watchLog(_ run: Int) -> URL { directory.url.appendingPathComponent("watch-\(run).log") }

    /// The `consumers --json` line of `printer`.
    private func printerLine() throws -> [String: Any]? {
        let listed = try agent(["consumers", "--directory", directory.url.path, "--json"])
        XCTAssertEqual(listed.status, 0, listed.error)
        return try listed.output.split(separator: "\n").map(json).first { $0["consumer"] as? String == "printer" }
    }

    /// Two copies of one consumer: only the active one prints; the other takes over when the
    /// active one is SIGKILLed (its lease lapses), and `consumers` names the active copy.
    func testTwoCopiesPrintEachTransactionOnceAndTheStandbyTakesOverAKilledOne() throws {
        try initStore()
        let writer = try Peer("writer", directory: directory, store: store)
        defer { writer.kill() }
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
        let (first, firstOutput) = try startWatch(0, lease: 1)
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        XCTAssertTrue(
            try eventually(timeout: 30) { try self.printerLine().flatMap { $0["owner"] as? [String: Any] }?["pid"] as? Int == Int(first.processIdentifier) },
            "the first copy is active")
        let (second, secondOutput) = try startWatch(1, lease: 1)
        defer { if second.isRunning { kill(second.processIdentifier, SIGKILL) } }
        XCTAssertTrue(
            try eventually(timeout: 30) { try String(contentsOf: self.watchLog(1), encoding: .utf8).contains("this one stands by") },
            "the second copy says it stands by: \((try? String(contentsOf: watchLog(1), encoding: .utf8)) ?? "")")
        let standbys = try XCTUnwrap(try printerLine()?["standbys"] as? [[String: Any]])
        XCTAssertEqual(standbys.map { $0["pid"] as? Int }, [Int(second.processIdentifier)], "consumers lists the copy standing by")
        let status = try agent(["status", "--directory", directory.url.path])
        XCTAssertTrue(
            status.output.contains("active: pid \(first.processIdentifier) on ") && status.output.contains("standing by: pid \(second.processIdentifier) on "),
            status.output)

        try writer.post("burst 200 a-")
        XCTAssertTrue(try writer.receive(timeout: 120).hasPrefix("ok "))
        let firstBurst = Int(try coordinator.currentHistoryToken())
        XCTAssertTrue(
            try eventually(timeout: 60) { try coordinator.historyCursor(consumer: "printer").map { $0.token >= firstBurst } ?? false },
            "the active copy printed the first burst")
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()

        try writer.post("burst 200 b-")
        XCTAssertTrue(try writer.receive(timeout: 120).hasPrefix("ok "))
        let last = Int(try coordinator.currentHistoryToken())
        XCTAssertTrue(
            try eventually(timeout: 60) { try coordinator.historyCursor(consumer: "printer").map { $0.token >= last } ?? false },
            "the standby took over and printed the second burst")
        XCTAssertTrue(try String(contentsOf: watchLog(1), encoding: .utf8).contains("this copy takes over"), "and when it takes over")
        let line = try XCTUnwrap(try printerLine())
        XCTAssertEqual((line["owner"] as? [String: Any])?["pid"] as? Int, Int(second.processIdentifier), "consumers names the active copy")
        XCTAssertEqual(line["owner_epoch"] as? Int, 2)
        XCTAssertEqual((line["standbys"] as? [Any])?.count, 0, "the copy that took over stands by no more")
        kill(second.processIdentifier, SIGTERM)
        second.waitUntilExit()

        let byFirst = try lines(firstOutput).compactMap { $0["token"] as? Int }
        let bySecond = try lines(secondOutput).compactMap { $0["token"] as? Int }
        let expected = try coordinator.history(after: 0).filter { !$0.isEmpty }.map { Int($0.token) }
        XCTAssertEqual(Set(byFirst + bySecond), Set(expected), "every transaction printed")
        XCTAssertTrue(byFirst.allSatisfy { $0 <= firstBurst }, "the first copy printed only while it was active")
        XCTAssertTrue(bySecond.allSatisfy { $0 > firstBurst }, "the standby printed nothing while the first copy was active")
        XCTAssertEqual(byFirst.count + bySecond.count, expected.count, "no transaction printed twice")
    }

    /// The active copy frozen (SIGSTOP) past its lease: the standby takes over and prints what
    /// commits meanwhile; thawed, the old copy prints nothing more, says it lost the lease and
    /// exits non-zero (systemd starts it again, to stand by). At most the batch it had in hand is
    /// printed by both.
    func testAFrozenActiveCopyLosesItsLeaseAndExitsWhenThawed() throws {
        try initStore()
        let writer = try Peer("writer", directory: directory, store: store)
        defer { writer.kill() }
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
        let (first, firstOutput) = try startWatch(0, lease: 1)
        defer {
            kill(first.processIdentifier, SIGCONT)
            if first.isRunning { kill(first.processIdentifier, SIGKILL) }
        }
        XCTAssertTrue(
            try eventually(timeout: 30) { try self.printerLine().flatMap { $0["owner"] as? [String: Any] }?["pid"] as? Int == Int(first.processIdentifier) },
            "the first copy is active")
        let (second, secondOutput) = try startWatch(1, lease: 1)
        defer { if second.isRunning { kill(second.processIdentifier, SIGKILL) } }
        XCTAssertTrue(try eventually(timeout: 30) { try String(contentsOf: self.watchLog(1), encoding: .utf8).contains("this one stands by") })
        try writer.post("burst 100 a-")
        XCTAssertTrue(try writer.receive(timeout: 120).hasPrefix("ok "))
        let firstBurst = Int(try coordinator.currentHistoryToken())
        XCTAssertTrue(try eventually(timeout: 60) { try coordinator.historyCursor(consumer: "printer").map { $0.token >= firstBurst } ?? false })

        kill(first.processIdentifier, SIGSTOP)
        try writer.post("burst 100 b-")
        XCTAssertTrue(try writer.receive(timeout: 120).hasPrefix("ok "))
        let last = Int(try coordinator.currentHistoryToken())
        XCTAssertTrue(
            try eventually(timeout: 60) { try coordinator.historyCursor(consumer: "printer").map { $0.token >= last } ?? false },
            "the standby took over from the frozen copy and printed the second burst")
        XCTAssertEqual((try printerLine()?["owner"] as? [String: Any])?["pid"] as? Int, Int(second.processIdentifier))
        let printedBeforeThaw = try lines(firstOutput).count

        kill(first.processIdentifier, SIGCONT)
        XCTAssertTrue(eventually(timeout: 30) { !first.isRunning }, "the thawed copy ends")
        XCTAssertNotEqual(first.terminationStatus, 0, "non-zero: systemd starts it again")
        XCTAssertEqual(try lines(firstOutput).count, printedBeforeThaw, "nothing printed after the thaw")
        let firstLog = try String(contentsOf: watchLog(0), encoding: .utf8)
        XCTAssertTrue(firstLog.contains("lost the consumer's ownership lease"), firstLog)
        kill(second.processIdentifier, SIGTERM)
        second.waitUntilExit()

        let byFirst = try lines(firstOutput).compactMap { $0["token"] as? Int }
        let bySecond = try lines(secondOutput).compactMap { $0["token"] as? Int }
        let expected = try coordinator.history(after: 0).filter { !$0.isEmpty }.map { Int($0.token) }
        XCTAssertEqual(Set(byFirst + bySecond), Set(expected), "every transaction printed")
        // watch takes up to 100 transactions per batch: the frozen copy's batch in hand, printed
        // but not acknowledged, is printed again by the standby — and nothing else.
        let repeated = Set(byFirst).intersection(bySecond)
        XCTAssertLessThanOrEqual(repeated.count, 100, "at most one batch printed by both")
        XCTAssertEqual(Set(byFirst.suffix(repeated.count)), repeated, "the repeats are the last lines the frozen copy printed")
        XCTAssertEqual(Set(byFirst).count, byFirst.count)
        XCTAssertEqual(Set(bySecond).count, bySecond.count)
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
        XCTAssertEqual(printer["lease_seconds"] as? Double, 86_400, "a durable consumer's lease is the consumer lease, a day by default")
        let leased = try agent(["consumers", "--directory", directory.url.path, "--json", "--consumer-lease", "600"])
        XCTAssertEqual(leased.status, 0, leased.error)
        let withLease = try XCTUnwrap(try leased.output.split(separator: "\n").map(json).first { $0["consumer"] as? String == "printer" })
        XCTAssertEqual(withLease["lease_seconds"] as? Double, 600, "the hub's consumer lease, as given")
        XCTAssertNotEqual(try agent(["consumers", "--directory", directory.url.path, "--consumer-lease", "0"]).status, 0)

        let removed = try agent(["consumers", "--directory", directory.url.path, "--remove", "printer"])
        XCTAssertEqual(removed.status, 0, removed.error)
        XCTAssertNil(try coordinator.historyCursor(consumer: "printer"))
        let again = try agent(["consumers", "--directory", directory.url.path, "--remove", "printer"])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.error.contains("no position named 'printer'"), again.error)
    }
}
