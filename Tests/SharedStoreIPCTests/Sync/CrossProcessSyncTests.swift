import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// Real processes on one store: saves in one are merged into the others' main contexts and their
/// results controllers, through an elected in-process hub.
final class CrossProcessSyncTests: XCTestCase {
    var directory: TemporaryDirectory!
    /// The store as the peers name it: a file, or a `postgres://` URL on the PostgreSQL pass.
    var store: String!
    static let runsOnPostgreSQL = true

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)  // a dead peer's pipe must fail the write, not kill the test run
        directory = try TemporaryDirectory()
        store = try TestBackend.makeSharedStore(model: try itemModel(), file: directory.store)
    }

    override func tearDown() { directory = nil }

    func testSaveInOneProcessReachesTheOtherTwo() throws {
        let a = try Peer("a", directory: directory, storeArgument: store)
        let b = try Peer("b", directory: directory, storeArgument: store)
        let c = try Peer("c", directory: directory, storeArgument: store)
        defer { [a, b, c].forEach { $0.kill() } }
        for peer in [a, b, c] { XCTAssertEqual(try peer.send("watch"), "ok 0") }

        XCTAssertTrue(try a.send("insert u1 1").hasPrefix("ok "))
        for peer in [b, c] {
            XCTAssertEqual(try peer.await("digest") { $0 == "digest \"u1\"=1" }, "digest \"u1\"=1", peer.name)
        }
        XCTAssertTrue(try b.send("update u1 5").hasPrefix("ok "))
        XCTAssertTrue(try c.send("insert u2 2").hasPrefix("ok "))
        let expected = "digest \"u1\"=5,\"u2\"=2"
        for peer in [a, b, c] {
            XCTAssertEqual(try peer.await("digest") { $0 == expected }, expected, peer.name)
        }
        XCTAssertTrue(try a.send("delete u1").hasPrefix("ok "))
        for peer in [a, b, c] {
            XCTAssertEqual(try peer.await("digest") { $0 == "digest \"u2\"=2" }, "digest \"u2\"=2", peer.name)
        }
        // Each process merged every other process's token exactly once, in order.
        let tokensOfB = try b.send("tokens")
        XCTAssertEqual(tokensOfB, "tokens 1,3,4", "b merged a's and c's saves, not its own (2)")
        XCTAssertEqual(try c.send("tokens"), "tokens 1,2,4")
        for peer in [a, b, c] { XCTAssertEqual(try peer.send("quit"), "bye") }
    }
}

extension CrossProcessSyncTests {
    /// The hub process is SIGKILLed during a stream of 1,000 saves: another process takes over, and
    /// every surviving process ends with the same data and saw every token exactly once.
    func testHubKilledDuringAStreamOfSaves() throws {
        let hub = try Peer("hub", directory: directory, storeArgument: store)
        XCTAssertTrue(try hub.await("status") { $0.contains("hub=true") }.contains("hub=true"), "the first process serves the hub")
        let writer = try Peer("writer", directory: directory, storeArgument: store)
        let watcher = try Peer("watcher", directory: directory, storeArgument: store)
        defer { [hub, writer, watcher].forEach { $0.kill() } }
        for peer in [writer, watcher] {
            XCTAssertTrue(try peer.await("status") { $0.contains("connected=true") }.contains("connected=true"), peer.name)
            XCTAssertEqual(try peer.send("watch"), "ok 0")
        }
        try writer.post("burst 1000 s")
        // Kill the hub once the stream is well under way.
        _ = try watcher.await("status", timeout: 30) { status in
            statusField(status, "merged") >= 200
        }
        let killed = Date()
        hub.kill()
        let takeover = try watcher.await("status", timeout: 10) { $0.contains("connected=true") }
        print(String(format: "hub fail-over observed by the watcher after %.0f ms", Date().timeIntervalSince(killed) * 1000))
        let done = try writer.receive(timeout: 120)
        XCTAssertEqual(done, "ok 1000", "the writer never saw an error")
        XCTAssertTrue(takeover.contains("connected=true"), "a survivor took over the hub: \(takeover)")
        let stored = try writer.send("storedigest")
        XCTAssertTrue(stored.contains("\"s999\"=999"))
        for peer in [writer, watcher] {
            XCTAssertEqual(try peer.await("digest", timeout: 20) { $0 == stored }, stored, "\(peer.name) converged")
        }
        XCTAssertEqual(
            try watcher.send("tokens"), "tokens " + (1...1000).map(String.init).joined(separator: ","),
            "every token exactly once, in order")
        XCTAssertEqual(try writer.send("tokens"), "tokens ")
    }

    /// Four processes write 500 transactions each at the same time: no error, everyone converges.
    func testFourWritersConverge() throws {
        let peers = try (0..<4).map { try Peer("p\($0)", directory: directory, storeArgument: store) }
        defer { peers.forEach { $0.kill() } }
        for peer in peers { XCTAssertEqual(try peer.send("watch"), "ok 0") }
        for (i, peer) in peers.enumerated() { try peer.post("burst 500 w\(i)-") }
        for peer in peers { XCTAssertTrue(try peer.receive(timeout: 180).hasPrefix("ok "), peer.name) }
        let stored = try peers[0].send("storedigest")
        XCTAssertEqual(stored.split(separator: ",").count, 2_000)
        for peer in peers {
            XCTAssertEqual(try peer.await("digest", timeout: 30) { $0 == stored }, stored, "\(peer.name) converged")
            let tokens = try peer.send("tokens").dropFirst("tokens ".count).split(separator: ",").compactMap { Int($0) }
            XCTAssertEqual(tokens.count, 1_500, "\(peer.name) merged the other three processes' transactions")
            XCTAssertEqual(tokens, tokens.sorted(), "in token order")
        }
    }
}

/// A numeric field of a peer's `status` line (`status connected=true hub=false merged=12 expired=0`).
func statusField(_ status: String, _ name: String) -> Int {
    status.split(separator: " ").first { $0.hasPrefix("\(name)=") }.flatMap { Int($0.dropFirst(name.count + 1)) } ?? 0
}
