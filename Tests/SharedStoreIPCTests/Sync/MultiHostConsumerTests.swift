import AmbarPostgres
import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// Two copies of one durable consumer on two hosts (network namespaces, each with its hub),
/// sharing a PostgreSQL store: one active at a time, through a freeze, a thaw and a SIGKILL.
extension MultiHostTests {
    /// Starts copy `copy` of consumer `name` on host `n` (the test helper's `consume`: one Alert
    /// per Item whose value is a multiple of 3, with a 0.3 s ownership lease).
    private func startConsumerCopy(_ name: String, host n: Int, copy: String) throws -> (SpawnedProcess, URL) {
        let log = hostDirectories[n - 1].url.appendingPathComponent("\(copy).log")
        let process = try SpawnedProcess(
            "/usr/sbin/ip",
            [
                "netns", "exec", network.hosts[n - 1], BuiltProducts.url("ambar-test-helper").path, "consume", hostDirectories[n - 1].url.path,
                storeURL(host: n), name, "1",
            ],
            log: log)
        XCTAssertTrue(eventually(timeout: 30) { (try? String(contentsOf: log, encoding: .utf8))?.contains("ready") == true || !process.isRunning })
        XCTAssertTrue(process.isRunning, "\(copy) started: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        return (process, log)
    }

    private func activePID(_ coordinator: PersistentStoreCoordinator, _ name: String) throws -> Int32? {
        try coordinator.consumerOwnerships().first { $0.consumer == name && $0.expires > Date() }?.owner.pid
    }

    /// Copy A on host 1 is active and copy B on host 2 stands by while a writer on host 1 commits.
    /// A frozen (SIGSTOP) past its lease: B takes over — within the lease when A froze between
    /// transactions, once the server ends A's session (`idle_in_transaction_timeout`, 10 s) when
    /// A froze inside one, holding the ownership row. A thawed: it ends without saving. B
    /// SIGKILLed: A, started again, takes over and finishes. Every Alert is in the store exactly
    /// once.
    func testTwoCopiesOfAConsumerOnTwoHostsHandEachOtherTheWorkExactlyOnce() throws {
        try setUpNetwork(hosts: 2, model: try alertModel())
        let coordinator = try PersistentStoreCoordinator(model: try alertModel(), store: .postgres(localStore))
        let writer = try peer("writer", host: 1)
        defer { writer.kill() }
        let (copyA, logA) = try startConsumerCopy("ha", host: 1, copy: "copy-a")
        defer { if copyA.isRunning { kill(copyA.processIdentifier, SIGKILL) } }
        XCTAssertTrue(try eventually(timeout: 30) { try self.activePID(coordinator, "ha") == copyA.processIdentifier }, "A is active")
        let (copyB, logB) = try startConsumerCopy("ha", host: 2, copy: "copy-b")
        defer { if copyB.isRunning { kill(copyB.processIdentifier, SIGKILL) } }
        XCTAssertTrue(
            try eventually(timeout: 30) { try coordinator.consumerStandbys().contains { $0.consumer == "ha" && $0.owner.pid == copyB.processIdentifier } },
            "B stands by, recorded from host 2")

        let items = TestScale.count(600)
        try writer.post("burstretry \(items) i")
        XCTAssertTrue(try eventually(timeout: 60) { try coordinator.historyCursor(consumer: "ha").map { $0.token > 50 } ?? false }, "A works")
        kill(copyA.processIdentifier, SIGSTOP)
        XCTAssertTrue(
            try eventually(timeout: 30) { try self.activePID(coordinator, "ha") == copyB.processIdentifier },
            "B took over from frozen A: \(String(describing: try? coordinator.consumerOwnerships())); B's log: \(((try? String(contentsOf: logB, encoding: .utf8)) ?? "").suffix(3000)); sessions: \(String(describing: try? server.psql(["-d", database, "-c", "SELECT pid, application_name, state, wait_event_type, wait_event, now() - xact_start AS in_xact, left(query, 120) FROM pg_stat_activity WHERE datname = current_database()"]).output))"
        )
        let tookOver = try XCTUnwrap(try coordinator.historyCursor(consumer: "ha")).token
        XCTAssertTrue(try eventually(timeout: 60) { try coordinator.historyCursor(consumer: "ha").map { $0.token > tookOver } ?? false }, "B works")
        kill(copyA.processIdentifier, SIGCONT)
        XCTAssertNotNil(copyA.waitForExit(timeout: 30), "A, thawed, ends")
        let thawed = (try? String(contentsOf: logA, encoding: .utf8)) ?? ""
        // Thawed, A finds out at its next move and ends: its lease was taken (a fenced save
        // refused), or, frozen inside its save's transaction, the server ended that session (or
        // the statement's time ran out while it was frozen). Nothing of it was saved either way:
        // the count below.
        XCTAssertTrue(
            ["no longer owns consumer 'ha'", "the server ended the session", "no answer within"].contains { thawed.contains($0) }
                && thawed.contains("the consumer failed:"), thawed)

        kill(copyB.processIdentifier, SIGKILL)
        _ = copyB.waitForExit(timeout: 10)
        let (again, _) = try startConsumerCopy("ha", host: 1, copy: "copy-a2")
        defer { if again.isRunning { kill(again.processIdentifier, SIGKILL) } }
        XCTAssertTrue(try writer.receive(timeout: 240).hasPrefix("ok \(items)"), "the writer wrote every item")
        let lastItemToken = try coordinator.history(after: 0).filter { !$0.inserted.filter { $0.entityName == "Item" }.isEmpty }.map(\.token).max() ?? 0
        // B may have done all the work before it was killed (a slow run: ThreadSanitizer), so
        // caught up alone does not say A took over: B's lease must run out first.
        XCTAssertTrue(
            try eventually(timeout: 90) { try self.activePID(coordinator, "ha") == again.processIdentifier },
            "A, started again, took over from killed B: \(String(describing: try? coordinator.consumerOwnerships()))")
        XCTAssertTrue(
            try eventually(timeout: 90) { try coordinator.historyCursor(consumer: "ha").map { $0.token >= lastItemToken } ?? false },
            "A, started again, caught up")

        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "check")
        let (values, alerts) = try context.performAndWait { () throws(AmbarError) -> ([String: Int64], [String]) in
            var values: [String: Int64] = [:]
            for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                if case .string(let uid) = try item.value(forKey: "uid"), case .integer(let value) = try item.value(forKey: "value") { values[uid] = value }
            }
            var alerts: [String] = []
            for alert in try context.fetch(FetchRequest<ManagedObject>(entityName: "Alert")) {
                if case .string(let uid) = try alert.value(forKey: "item") { alerts.append(uid) }
            }
            return (values, alerts)
        }
        XCTAssertEqual(values.count, items)
        let expected = Set(values.filter { $0.value % 3 == 0 }.keys)
        XCTAssertEqual(Set(alerts), expected, "one alert for each item whose value is a multiple of 3")
        XCTAssertEqual(alerts.count, expected.count, "none made twice, by either host")
    }
}
