import AmbarStack
import Foundation
import SharedStoreIPC
import XCTest

/// Real processes on one store: saves in one are merged into the others' main contexts and their
/// results controllers, through an elected in-process hub.
final class CrossProcessSyncTests: XCTestCase {
    var directory: SharedDirectory!

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)  // a dead peer's pipe must fail the write, not kill the test run
        directory = try SharedDirectory()
        _ = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(directory.store))
    }

    override func tearDown() { directory = nil }

    func testSaveInOneProcessReachesTheOtherTwo() throws {
        let a = try Peer("a", directory: directory)
        let b = try Peer("b", directory: directory)
        let c = try Peer("c", directory: directory)
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
