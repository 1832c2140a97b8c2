import AmbarPostgres
import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// Processes on two "hosts" (two shared directories, each with its own hub) around one
/// PostgreSQL store: the server's doorbell reaches every process through one LISTEN per host.
final class PostgresSharingTests: XCTestCase {
    var server: PostgresTestServer!
    var database: String!
    var store: String!
    var hostA: TemporaryDirectory!
    var hostB: TemporaryDirectory!

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)
        switch Result(catching: { () throws(PostgresTestServer.Unavailable) in try PostgresTestServer.shared() }) {
        case .success(let shared): server = shared
        case .failure(let unavailable) where !PostgresTestServer.isRequired: throw XCTSkip("no PostgreSQL server on this machine: \(unavailable)")
        case .failure(let unavailable): throw unavailable
        }
        let name = "sharing_\(UUID().uuidString.prefix(8))"
        let url = try server.url(database: name)
        database = PostgresTestServer.databaseName(name)
        _ = try PersistentStoreCoordinator(model: try itemModel(), store: .postgres(url))
        store = url.absoluteString
        hostA = try TemporaryDirectory()
        hostB = try TemporaryDirectory()
    }

    override func tearDown() {
        hostA = nil
        hostB = nil
    }

    /// Waits until `expected` connections listen for the store; fails, with the count, if they do not.
    func awaitListeners(_ expected: Int, timeout: TimeInterval = 20, _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let count = try server.awaitListeners(database: database!, expected, timeout: timeout)
        XCTAssertEqual(count, expected, "\(message): listening connections", file: file, line: line)
    }

    func testTwoHostsConvergeThroughOneListenerPerHostAndAHubsDeathMovesItsListener() throws {
        let a = try (1...3).map { try Peer("a\($0)", directory: hostA, storeArgument: store) }
        let b = try (1...2).map { try Peer("b\($0)", directory: hostB, storeArgument: store) }
        let everyone = a + b
        defer { everyone.forEach { $0.kill() } }
        for peer in everyone { XCTAssertEqual(try peer.send("watch"), "ok 0") }
        try awaitListeners(2, "five processes on two hosts")

        XCTAssertTrue(try a[1].send("insert u1 1").hasPrefix("ok "))
        XCTAssertTrue(try b[1].send("insert u2 2").hasPrefix("ok "))
        XCTAssertTrue(try a[2].send("update u2 3").hasPrefix("ok "))
        let expected = "digest \"u1\"=1,\"u2\"=3"
        for peer in everyone {
            XCTAssertEqual(try peer.await("digest") { $0 == expected }, expected, peer.name)
        }

        // Host A's hub dies: a survivor there takes over the hub and its LISTEN.
        guard let hubIndex = try a.firstIndex(where: { try $0.send("status").contains("hub=true") }) else {
            return XCTFail("no process on host A serves its hub")
        }
        a[hubIndex].kill()
        let survivors = a.enumerated().filter { $0.offset != hubIndex }.map(\.element)
        _ = try survivors[0].await("status", timeout: 20) { _ in
            (try? survivors.contains { try $0.send("status").contains("listening=true") }) == true
        }
        try awaitListeners(2, "after host A's hub was killed")
        XCTAssertTrue(try b[0].send("insert u3 4").hasPrefix("ok "))
        XCTAssertTrue(try survivors[0].send("delete u1").hasPrefix("ok "))
        let final = "digest \"u2\"=3,\"u3\"=4"
        for peer in survivors + b {
            XCTAssertEqual(try peer.await("digest") { $0 == final }, final, peer.name)
        }
        // Five transactions: each process merged every other process's, once, in order.
        let mine: [String: [Int]] = ["a2": [1], "b2": [2], "a3": [3], "b1": [4]]
        for peer in survivors + b {
            let tokens = try peer.send("tokens").dropFirst("tokens ".count).split(separator: ",").compactMap { Int($0) }
            var own = mine[peer.name] ?? []
            if peer === survivors[0] { own.append(5) }
            XCTAssertEqual(tokens, (1...5).filter { !own.contains($0) }, "\(peer.name): every other token exactly once, in order")
        }
    }
}

extension PostgresSharingTests {
    /// The server crashes (`pg_ctl stop -m immediate`) and comes back in the middle of a stream of
    /// saves: the writer retries what failed (idempotency keys make a retry of a save that did
    /// commit harmless), the listeners reconnect and catch up from the ledger, and every watcher
    /// ends with the store's data, having merged every transaction exactly once, in order.
    func testServerCrashAndRestartInTheMiddleOfAStreamOfSaves() throws {
        let writer = try Peer("writer", directory: hostA, storeArgument: store)
        let near = try Peer("near", directory: hostA, storeArgument: store)
        let far = try Peer("far", directory: hostB, storeArgument: store)
        let everyone = [writer, near, far]
        defer { everyone.forEach { $0.kill() } }
        for peer in everyone { XCTAssertEqual(try peer.send("watch"), "ok 0") }
        try awaitListeners(2, "two hosts")

        let saves = TestScale.count(1500)
        try writer.post("burstretry \(saves) s")
        _ = try far.await("status", timeout: 60) { statusField($0, "merged") >= saves / 15 }
        try server.crash()
        try server.restart()
        let done = try writer.receive(timeout: 180)
        XCTAssertTrue(done.hasPrefix("ok \(saves)"), done)
        XCTAssertGreaterThan(statusField(done, "retries"), 0, "the crash came while the writer was saving: \(done)")
        // The server's notification of each save reaches its own host too, often before the save
        // returns: never counted as a message the ledger does not back.
        XCTAssertEqual(statusField(try writer.send("status"), "rejected"), 0)
        try awaitListeners(2, "both hosts listen again after the restart")

        let stored = try writer.send("storedigest")
        XCTAssertEqual(stored.split(separator: ",").count, saves)
        for peer in [near, far] {
            XCTAssertEqual(try peer.await("digest", timeout: 60) { $0 == stored }, stored, "\(peer.name) converged")
            let tokens = try peer.send("tokens").dropFirst("tokens ".count).split(separator: ",").compactMap { Int64($0) }
            XCTAssertEqual(tokens, Array(Set(tokens)).sorted(), "\(peer.name): each token once, in order")
            XCTAssertGreaterThanOrEqual(tokens.count, saves, "\(peer.name): every one of the writer's transactions")
        }
    }
}

extension PostgresSharingTests {
    /// A write made outside Ambar (psql) is noticed: the store's triggers ring the doorbell, and
    /// every process on every host re-reads what it holds.
    func testAWriteMadeOutsideAmbarReachesEveryHost() throws {
        let a = try Peer("a", directory: hostA, storeArgument: store)
        let b = try Peer("b", directory: hostB, storeArgument: store)
        defer { [a, b].forEach { $0.kill() } }
        for peer in [a, b] { XCTAssertEqual(try peer.send("watch"), "ok 0") }
        try awaitListeners(2, "two hosts")
        XCTAssertTrue(try a.send("insert u1 1").hasPrefix("ok "))
        for peer in [a, b] { XCTAssertEqual(try peer.await("digest") { $0 == "digest \"u1\"=1" }, "digest \"u1\"=1", peer.name) }

        let update = try server.psql(["-d", database, "-c", "UPDATE \"Item\" SET \"value\" = 99 WHERE \"uid\" = 'u1'"])
        XCTAssertEqual(update.status, 0, update.error)
        for peer in [a, b] {
            XCTAssertEqual(try peer.await("digest", timeout: 20) { $0 == "digest \"u1\"=99" }, "digest \"u1\"=99", "\(peer.name) re-read the row")
        }
    }
}
