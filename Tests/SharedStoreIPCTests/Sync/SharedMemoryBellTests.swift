import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// The shared-memory bell: a committing process wakes the others itself, past the hub. The ledger
/// stays the truth: a forged ring only makes them read it, and a bell that cannot be used leaves
/// the hub's frames to ring.
final class SharedMemoryBellTests: XCTestCase {
    var directory: TemporaryDirectory!
    /// The periodic ledger check, set an hour apart: with the hub frozen, only the bell delivers.
    let quietChecks = ["AMBAR_HELPER_LEDGER_CHECK_SECONDS": "3600"]

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)
        directory = try TemporaryDirectory()
        _ = try TestBackend.makeSharedStore(model: try itemModel(), file: directory.store)
    }

    override func tearDown() { directory = nil }

    private func bellPath() throws -> String {
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(directory.store))
        return directory.url.appendingPathComponent(".ambar/bell-\(coordinator.storeIdentifier)").path
    }

    /// A hub process, then a writer and a watcher (its results controller loaded), all with the
    /// periodic ledger check an hour apart; returned once the two are connected, have mapped the
    /// bell and are past their first check.
    private func threePeersWithQuietChecks() throws -> (hub: Peer, writer: Peer, watcher: Peer) {
        let hub = try Peer("hub", directory: directory, storeArgument: directory.store.path, environment: quietChecks)
        XCTAssertTrue(try hub.await("status") { $0.contains("hub=true") }.contains("hub=true"))
        let writer = try Peer("writer", directory: directory, storeArgument: directory.store.path, environment: quietChecks)
        let watcher = try Peer("watcher", directory: directory, storeArgument: directory.store.path, environment: quietChecks)
        for peer in [writer, watcher] {
            let status = try peer.await("status") { $0.contains("connected=true") && statusField($0, "checks") >= 1 }
            XCTAssertTrue(status.contains("bellProblem=none"), "\(peer.name) maps the bell: \(status)")
            XCTAssertEqual(try peer.send("watch"), "ok 0")
        }
        return (hub, writer, watcher)
    }

    /// Three processes; the one serving the hub is frozen (SIGSTOP), so no frame is relayed, and
    /// the periodic ledger check is an hour away: a save still reaches the third process at once,
    /// through the bell, with no ledger check in between.
    func testASaveReachesAnotherProcessThroughTheBellWhileTheHubIsFrozen() throws {
        let (hub, writer, watcher) = try threePeersWithQuietChecks()
        defer {
            kill(hub.process.processIdentifier, SIGCONT)
            [hub, writer, watcher].forEach { $0.kill() }
        }
        let before = try watcher.send("status")
        kill(hub.process.processIdentifier, SIGSTOP)
        XCTAssertTrue(try writer.send("insert u1 1").hasPrefix("ok "))
        XCTAssertEqual(try watcher.await("digest") { $0 == "digest \"u1\"=1" }, "digest \"u1\"=1")
        let after = try watcher.send("status")
        XCTAssertEqual(statusField(after, "checks"), statusField(before, "checks"), "no periodic ledger check delivered it: \(before) → \(after)")
        XCTAssertGreaterThan(statusField(after, "bell"), statusField(before, "bell"), "the bell rang: \(after)")
        XCTAssertTrue(after.contains("bellLate="), after)
        XCTAssertEqual(statusField(after, "bellLate"), statusField(before, "bellLate"), "the ring's wake reached it, not its wait slice's end: \(after)")
        XCTAssertTrue(after.contains("connected=true"), "the watcher still counts on the (frozen) hub: \(after)")
    }

    /// Anyone who can write the bell can ring it with any token: the receivers read the ledger,
    /// find nothing new, merge nothing, and still merge the next real save.
    func testAForgedRingIsOnlyALedgerRead() throws {
        let writer = try Peer("writer", directory: directory, storeArgument: directory.store.path)
        let watcher = try Peer("watcher", directory: directory, storeArgument: directory.store.path)
        defer { [writer, watcher].forEach { $0.kill() } }
        XCTAssertTrue(try watcher.await("status") { $0.contains("connected=true") }.contains("bellProblem=none"))
        XCTAssertEqual(try watcher.send("watch"), "ok 0")
        // A hostile write: the sequence moved and a token far beyond the ledger's head.
        let bell = try FileHandle(forUpdating: URL(fileURLWithPath: try bellPath()))
        defer { try? bell.close() }
        try bell.seek(toOffset: 12)
        try bell.write(contentsOf: Data([0x55, 0x55, 0x55, 0x55]))
        try bell.write(contentsOf: withUnsafeBytes(of: (Int64.max - 1).littleEndian) { Data($0) })
        try bell.synchronize()
        XCTAssertGreaterThan(statusField(try watcher.await("status") { statusField($0, "bell") >= 1 }, "bell"), 0, "the forged ring was seen")
        XCTAssertEqual(try watcher.send("digest").trimmingCharacters(in: .whitespaces), "digest", "nothing was merged")
        XCTAssertTrue(try writer.send("insert u1 1").hasPrefix("ok "))
        XCTAssertEqual(try watcher.await("digest") { $0 == "digest \"u1\"=1" }, "digest \"u1\"=1", "the next real save is merged")
        XCTAssertEqual(try watcher.send("tokens"), "tokens 1", "exactly once, the ledger's token")
    }

    /// A file at the bell's path that is not a bell: the processes say they cannot use it, and
    /// share through the hub as before.
    func testAFileThatIsNotABellLeavesTheHubToRing() throws {
        let path = try bellPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(repeating: 0x7A, count: 4096).write(to: URL(fileURLWithPath: path))
        let writer = try Peer("writer", directory: directory, storeArgument: directory.store.path)
        let watcher = try Peer("watcher", directory: directory, storeArgument: directory.store.path)
        defer { [writer, watcher].forEach { $0.kill() } }
        let status = try watcher.await("status") { $0.contains("connected=true") }
        XCTAssertTrue(status.contains("bellProblem=yes"), status)
        XCTAssertEqual(try watcher.send("watch"), "ok 0")
        XCTAssertTrue(try writer.send("insert u1 1").hasPrefix("ok "))
        XCTAssertEqual(try watcher.await("digest") { $0 == "digest \"u1\"=1" }, "digest \"u1\"=1")
        XCTAssertTrue(watcher.log.contains("something other than an Ambar bell"), watcher.log)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data(repeating: 0x7A, count: 4096), "the file is left as it was")
    }

    /// The shared directory removed under a running process (its store file kept elsewhere): its
    /// checks find the bell gone and say so, but neither the bell's check nor the hub's socket
    /// check makes the directory again, and saves still go to the store.
    func testARemovedSharedDirectoryIsNotMadeAgain() throws {
        let shared = directory.url.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
        let peer = try Peer(
            "lone", program: "ambar-test-helper", arguments: ["peer", shared.path, directory.store.path], logDirectory: directory.url)
        defer { peer.kill() }
        let started = try peer.await("status") { $0.contains("hub=true") && statusField($0, "checks") >= 1 }
        XCTAssertTrue(started.contains("bellProblem=none"), started)
        XCTAssertTrue(FileManager.default.fileExists(atPath: shared.appendingPathComponent(".ambar").path))

        try FileManager.default.removeItem(at: shared)
        // The bell's check runs every poll (a quarter second), the hub's socket check every second.
        let status = try peer.await("status") { $0.contains("bellProblem=yes") }
        XCTAssertTrue(status.contains("bellProblem=yes"), status)
        XCTAssertTrue(eventually { peer.log.contains("not made again") }, "the hub says why it does not bind again: \(peer.log)")
        XCTAssertTrue(peer.log.contains("\(shared.path) no longer exists"), peer.log)
        XCTAssertFalse(FileManager.default.fileExists(atPath: shared.path), "the removed shared directory was made again")
        XCTAssertTrue(try peer.send("insert u1 1").hasPrefix("ok "), "saves still reach the store")
        XCTAssertFalse(FileManager.default.fileExists(atPath: shared.path))
    }

    /// The bell file removed while processes run: each maps the new one at its next check, and a
    /// save reaches the others through it again (the hub frozen).
    func testARemovedBellIsMappedAgain() throws {
        let (hub, writer, watcher) = try threePeersWithQuietChecks()
        defer {
            kill(hub.process.processIdentifier, SIGCONT)
            [hub, writer, watcher].forEach { $0.kill() }
        }
        let path = try bellPath()
        let old = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        try FileManager.default.removeItem(atPath: path)
        // The first process to check creates the file again; wait until both have mapped it, which
        // each shows by seeing a ring through it (a ring is harmless: a ledger read).
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: path) }, "a process created the bell again within 20 s")
        let new = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        XCTAssertNotEqual(new, old, "a new file")
        // Each maps it at its next check (a quarter second). Ring it by hand (the sequence moved,
        // no token: harmless) until both have seen a ring through it.
        let baseline = (statusField(try writer.send("status"), "bell"), statusField(try watcher.send("status"), "bell"))
        let both = try eventually(every: 0.2) {
            if let bell = FileHandle(forUpdatingAtPath: path) {
                try bell.seek(toOffset: 12)
                try bell.write(contentsOf: Data([UInt8.random(in: 1...255), 0, 0, 0]))
                try bell.close()
            }
            let seenByWriter = statusField(try writer.send("status"), "bell") > baseline.0
            return try seenByWriter && statusField(watcher.send("status"), "bell") > baseline.1
        }
        XCTAssertTrue(both, "both processes mapped the new bell")
        let before = try watcher.send("status")
        let writerBefore = try writer.send("status")
        kill(hub.process.processIdentifier, SIGSTOP)
        XCTAssertTrue(try writer.send("insert u1 1").hasPrefix("ok "))
        do {
            let digest = try watcher.await("digest") { $0 == "digest \"u1\"=1" }
            XCTAssertEqual(digest, "digest \"u1\"=1")
        } catch {
            // CI, stop 55: once in many runs the save did not reach the watcher; say all there is.
            let statuses = [writerBefore, try writer.send("status"), before, try watcher.send("status")].joined(separator: "\n")
            let logs = "watcher's log:\n\(watcher.log.suffix(4000))\nwriter's log:\n\(writer.log.suffix(2000))"
            XCTFail("\(error)\nwriter then and now, watcher then and now:\n\(statuses)\nbell: \(bellHeader(path))\n\(logs)")
        }
        XCTAssertEqual(statusField(try watcher.send("status"), "checks"), statusField(before, "checks"), "delivered by the new bell")
    }

    /// The bell file's header as hex (magic, layout, sequence, token), and its inode, for failure messages.
    private func bellHeader(_ path: String) -> String {
        let inode = (try? FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber]).map { "\(String(describing: $0))" } ?? "none"
        // try?: a message only; a file that cannot be read says so
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path)) else { return "unreadable (inode \(inode))" }
        return data.prefix(24).map { String(format: "%02x", $0) }.joined() + " (inode \(inode), \(data.count) bytes)"
    }
}
