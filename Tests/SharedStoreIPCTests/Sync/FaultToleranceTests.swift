import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// Faults around the shared store: dying writers, hostile peers, purged history.
final class FaultToleranceTests: XCTestCase {
    var directory: TemporaryDirectory!
    var storeUUID = ""

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)
        directory = try TemporaryDirectory()
        storeUUID = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(directory.store)).storeIdentifier
    }

    override func tearDown() { directory = nil }

    var socketPath: String { directory.url.appendingPathComponent(".ambar/sync.sock").path }

    /// A writer SIGKILLed in the middle of large saves leaves a sound store with whole
    /// transactions only, and the others carry on.
    func testWriterKilledMidSave() throws {
        let hub = try Peer("hub", directory: directory)
        let writer = try Peer("writer", directory: directory)
        defer { [hub, writer].forEach { $0.kill() } }
        try writer.post("bigsaves 40 2000")
        _ = try hub.await("status", timeout: 60) { statusField($0, "merged") >= 3 }
        writer.kill()
        XCTAssertEqual(try hub.send("integrity"), "integrity ok")
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(directory.store))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let counts: [AttributeValue: Int] = try context.performAndWait {
            var counts: [AttributeValue: Int] = [:]
            for row in try context.fetchValues(FetchRequest<ManagedObject>(entityName: "Item"), properties: ["value"]) {
                counts[row["value"] ?? .null, default: 0] += 1
            }
            return counts
        }
        XCTAssertGreaterThanOrEqual(counts.count, 3)
        XCTAssertTrue(counts.values.allSatisfy { $0 == 2000 }, "every save is whole: \(counts.values.sorted())")
        let history = try coordinator.history(after: 0)
        XCTAssertEqual(history.count, counts.count, "one ledger transaction per visible save")
        XCTAssertTrue(history.allSatisfy { $0.inserted.count == 2000 })
        // The others carry on.
        let late = try Peer("late", directory: directory)
        defer { late.kill() }
        XCTAssertEqual(try late.send("watch"), "ok \(counts.count * 2000)")
        XCTAssertTrue(try hub.send("insert after 1").hasPrefix("ok "))
        XCTAssertTrue(try late.await("digest") { $0.contains("\"after\"=1") }.contains("\"after\"=1"))
    }

    /// Sends raw bytes to the hub and returns everything it answers until it closes.
    func rawExchange(_ bytes: [UInt8]) throws -> [UInt8] {
        let peer = try RawPeer(socketPath)
        defer { peer.close() }
        try peer.write(bytes)
        return peer.readToEnd()
    }

    func firstFrame(_ bytes: [UInt8]) throws -> Frame? {
        var decoder = FrameDecoder()
        decoder.append(bytes)
        return try decoder.next()
    }

    func testHostilePeersAreRefusedAndOthersKeepWorking() throws {
        let hub = try Peer("hub", directory: directory)
        let other = try Peer("other", directory: directory)
        defer { [hub, other].forEach { $0.kill() } }
        XCTAssertEqual(try other.send("watch"), "ok 0")

        // Garbage: a length far above the maximum frame size.
        guard case .error(.malformed, let tooLarge)? = try firstFrame(try rawExchange([0x7F, 0xFF, 0xFF, 0xFF, 1, 2, 3])) else {
            return XCTFail("no error frame for an oversized frame")
        }
        XCTAssertTrue(tooLarge.contains("exceeds the maximum"), tooLarge)
        // Garbage: a frame of an unknown protocol version.
        guard case .error(.malformed, let version)? = try firstFrame(try rawExchange([0, 0, 0, 2, 99, 1])) else {
            return XCTFail("no error frame for a bad version")
        }
        XCTAssertTrue(version.contains("version 99"), version)
        // A did-save before any hello.
        guard case .error(.malformed, _)? = try firstFrame(try rawExchange(try WireFormat.encode(.ping(1)))) else {
            return XCTFail("no error frame for a frame before hello")
        }
        // The wrong store.
        let helper = BuiltProducts.url("ambar-test-helper").path
        XCTAssertEqual(try run(helper, ["probe", socketPath, UUID().uuidString]), "refused wrongStore")
        XCTAssertEqual(try run(helper, ["probe", socketPath, storeUUID]), "welcome")
        // Everyone else is unaffected.
        XCTAssertTrue(try hub.send("insert ok 1").hasPrefix("ok "))
        XCTAssertEqual(try other.await("digest") { $0 == "digest \"ok\"=1" }, "digest \"ok\"=1")
        XCTAssertTrue(try hub.send("status").contains("hub=true"))
    }

    /// A peer that reports a foreign write is refused, and the report is not relayed: only the
    /// hub reports them (from a database server's listener), so a same-group process cannot make
    /// every process re-read everything.
    func testAForeignWriteReportFromAPeerIsRefusedAndNotRelayed() throws {
        let hub = try Peer("hub", directory: directory)
        defer { hub.kill() }
        _ = try hub.await("status", timeout: 20) { $0.contains("hub=true") }
        guard let uuid = UUID(uuidString: storeUUID) else { return XCTFail("bad store UUID") }
        func hello(_ name: String) throws -> RawPeer {
            let peer = try RawPeer(socketPath)
            try peer.write(
                try WireFormat.encode(
                    .hello(.init(storeUUID: uuid, processID: getpid(), instanceID: UInt64.random(in: 1...UInt64.max / 2), processName: name, cursor: 0))))
            guard case .welcome? = try peer.readFrame() else { throw ConditionNotMet("no welcome for \(name)") }
            return peer
        }
        let listener = try hello("listener")
        defer { listener.close() }
        let hostile = try hello("hostile")
        defer { hostile.close() }
        try hostile.write(try WireFormat.encode(.foreignWrite(storeUUID: uuid)))
        guard case .error(.malformed, let message)? = try hostile.readFrame() else { return XCTFail("the foreign-write report was not refused") }
        XCTAssertTrue(message.contains("only the hub does"), message)
        XCTAssertTrue(hostile.sawEndOfStream(), "and the connection closed")
        // The next frame the listener gets is the hub's next save, not the report.
        XCTAssertTrue(try hub.send("insert a 1").hasPrefix("ok "))
        let next = try listener.readFrame(timeout: 10)
        guard case .didSave? = next else { return XCTFail("the listener got \(String(describing: next)), not the next save") }
    }

    /// A save made while its process has no hub connection is announced as soon as the process
    /// connects: the others hear of it then, not at their next ledger check. The hub comes up
    /// under another name with its listener already connected, and its socket is then moved to
    /// where the writer looks, so that the listener is there before the writer connects.
    func testASaveMadeWithoutAHubIsAnnouncedOnConnecting() async throws {
        let writer = try Peer(
            "writer", directory: directory, storeArgument: directory.store.path, environment: ["AMBAR_HELPER_MAY_NOT_SERVE_HUB": "1"])
        defer { writer.kill() }
        let answer = try writer.send("insert a 1")
        guard answer.hasPrefix("ok "), let token = Int64(answer.dropFirst(3)) else { return XCTFail("the save failed: \(answer)") }
        guard let uuid = UUID(uuidString: storeUUID) else { return XCTFail("bad store UUID") }
        let elsewhere = directory.url.appendingPathComponent(".ambar/elsewhere.sock").path
        let hub = try await SyncHub.start(try SyncHub.Configuration(socketPath: elsewhere, storeUUID: uuid, storeFile: directory.store))
        let listener = try RawPeer(elsewhere)
        defer { listener.close() }
        try listener.write(
            try WireFormat.encode(
                .hello(.init(storeUUID: uuid, processID: getpid(), instanceID: UInt64.random(in: 1...UInt64.max / 2), processName: "listener", cursor: 0))))
        guard case .welcome? = try listener.readFrame() else {
            await hub.stop()
            return XCTFail("no welcome for the listener")
        }
        XCTAssertEqual(rename(elsewhere, socketPath), 0, "moving the hub's socket: errno \(errno)")
        let announced = try listener.readFrame(timeout: 20)
        await hub.stop()
        guard case .didSave(let save)? = announced else { return XCTFail("the listener got \(String(describing: announced)), not the writer's save") }
        XCTAssertEqual(save.token, token)
    }

    struct ConditionNotMet: Error {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Another user: the socket's mode keeps it out; with the socket opened up, the hub's
    /// credential check does. A process with the store's group only as a supplementary group —
    /// one no /etc/group entry gives, as systemd's `SupplementaryGroups=` and `DynamicUser=` do —
    /// is admitted (the hub asks the kernel, SO_PEERGROUPS); the same user without it is refused.
    func testPeersAreAdmittedByTheGroupsTheKernelReports() throws {
        guard getuid() == 0 else {
            throw XCTSkip("running probes as other users and groups (setpriv) needs root; this run is uid \(getuid())")
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { throw XCTSkip("/usr/bin/setpriv (util-linux) is not installed") }
        guard let group = (4242..<4400).first(where: { getgrgid(gid_t($0)) == nil }).map({ gid_t($0) }) else {
            throw XCTSkip("every group ID in 4242..<4400 is in /etc/group here")
        }
        // The store belongs to root and to a group that only the kernel knows of.
        XCTAssertEqual(chown(directory.store.path, 0, group), 0)
        let hub = try Peer("hub", directory: directory)
        defer { hub.kill() }
        XCTAssertTrue(try hub.await("status") { $0.contains("hub=true") }.contains("hub=true"))
        let helper = BuiltProducts.url("ambar-test-helper").path
        let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups", helper, "probe", socketPath, storeUUID]
        XCTAssertTrue(try run("/usr/bin/setpriv", asNobody).hasPrefix("unreachable"), "the socket's mode keeps other users out")
        chmod(socketPath, 0o666)
        chmod(directory.url.path, 0o755)
        chmod(directory.url.appendingPathComponent(".ambar").path, 0o755)
        XCTAssertEqual(try run("/usr/bin/setpriv", asNobody), "refused notPermitted")
        let member = ["--reuid=4301", "--regid=4301", "--groups=\(group)", helper, "probe", socketPath, storeUUID]
        XCTAssertEqual(try run("/usr/bin/setpriv", member), "welcome", "the store's group as a supplementary group admits")
        let dropped = ["--reuid=4301", "--regid=4301", "--clear-groups", helper, "probe", socketPath, storeUUID]
        XCTAssertEqual(try run("/usr/bin/setpriv", dropped), "refused notPermitted", "without the group the same user is refused")
        let primary = ["--reuid=4301", "--regid=\(group)", "--clear-groups", helper, "probe", socketPath, storeUUID]
        XCTAssertEqual(try run("/usr/bin/setpriv", primary), "welcome", "the store's group as the primary group admits")
    }

    func run(_ executable: String, _ arguments: [String]) throws -> String {
        try ProcessRunner.run(URL(fileURLWithPath: executable), arguments, timeout: 20).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A process that misses transactions while the ledger is purged past its cursor is told,
    /// refreshes fully, and converges.
    func testConsumerWhoseHistoryWasPurgedRefreshesFully() throws {
        let hub = try Peer("hub", directory: directory)
        let frozen = try Peer("frozen", directory: directory)
        defer { [hub, frozen].forEach { $0.kill() } }
        XCTAssertTrue(try hub.send("insert a 1").hasPrefix("ok "))
        XCTAssertEqual(try frozen.send("watch"), "ok 1", "the consumer loaded the one item")
        // Writes that ring no doorbell (a plain coordinator in this process): the frozen consumer
        // can only learn of them from the ledger, which is purged before it wakes.
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(directory.store))
        // Freeze the consumer only once it has recorded its ledger position (it does so about a
        // second after it moves): stopped in the middle of that write, it would hold SQLite's write
        // lock, and the writes below would wait for it until their busy timeout.
        let head = try coordinator.currentHistoryToken()
        let consumer = "ambar-test-helper-\(frozen.process.processIdentifier)-"
        func recorded() throws -> Int64 { try coordinator.historyCursors().first { $0.consumer.hasPrefix(consumer) }?.token ?? 0 }
        XCTAssertTrue(try eventually(timeout: 10) { try recorded() >= head }, "the consumer recorded its position")
        kill(frozen.process.processIdentifier, SIGSTOP)
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try writer.performAndWait {
            for i in 0..<5 {
                try writer.fetch(FetchRequest<ManagedObject>(entityName: "Item")).first?.setValue(.integer(Int64(i + 10)), forKey: "value")
                try writer.save()
            }
            let b = try writer.insertObject(entityName: "Item")
            try b.setValue(.string("b"), forKey: "uid")
            try b.setValue(.integer(2), forKey: "value")
            try writer.save()
        }
        let current = try coordinator.currentHistoryToken()
        XCTAssertEqual(try coordinator.purgeHistory(through: current, lease: -1), current)
        kill(frozen.process.processIdentifier, SIGCONT)
        XCTAssertEqual(statusField(try frozen.await("status") { statusField($0, "expired") == 1 }, "expired"), 1)
        let stored = try hub.send("storedigest")
        XCTAssertEqual(try frozen.await("digest") { $0 == stored }, stored)
    }
}

extension FaultToleranceTests {
    /// A plain SQLite client (here Python's sqlite3) writes behind Ambar's back into a quiet store:
    /// the processes notice through `PRAGMA data_version` and refresh.
    func testWritesByOtherSQLiteClientsAreNoticed() throws {
        let hub = try Peer("hub", directory: directory)
        defer { hub.kill() }
        XCTAssertTrue(try hub.send("insert a 1").hasPrefix("ok "))
        XCTAssertEqual(try hub.send("watch"), "ok 1")
        // Let the watchdog see the store quiet first: a foreign write in the same watchdog interval
        // as an Ambar commit is not told apart (data_version says "changed", not by whom). Two
        // checks after now: the second one started after the commit was seen.
        let checked = statusField(try hub.send("status"), "checks")
        _ = try hub.await("status") { statusField($0, "checks") >= checked + 2 }
        let script =
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA busy_timeout=5000'); c.execute(\"UPDATE Item SET value=77, Z_OPT=Z_OPT+1 WHERE uid='a'\"); c.commit()"
        XCTAssertEqual(try run("/usr/bin/env", ["python3", "-c", script, directory.store.path]), "")
        XCTAssertEqual(try hub.await("digest", timeout: 10) { $0 == "digest \"a\"=77" }, "digest \"a\"=77", hub.log)
    }

    /// A process whose merge position cannot be recorded (the store refuses the write, as a full
    /// disk would) retries at every check but logs the failure once, and once when it works again,
    /// not four times a second.
    func testAPositionThatCannotBeRecordedIsLoggedOncePerChangeOfState() throws {
        let peer = try Peer("peer", directory: directory)
        defer { peer.kill() }
        XCTAssertTrue(try peer.send("insert a 1").hasPrefix("ok "))
        // Another SQLite client makes every write of a merge position fail.
        let failing =
            "CREATE TRIGGER refuse_positions BEFORE UPDATE ON ambar_cursors WHEN NEW.lease IS NOT NULL BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;"
            + "CREATE TRIGGER refuse_new_positions BEFORE INSERT ON ambar_cursors WHEN NEW.lease IS NOT NULL BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;"
        let sql = "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA busy_timeout=5000'); c.executescript(sys.argv[2]); c.commit()"
        XCTAssertEqual(try run("/usr/bin/env", ["python3", "-c", sql, directory.store.path, failing]), "")
        // The position moves (a save of its own and another process's), so it is written at every check.
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }
        XCTAssertTrue(try writer.send("insert b 2").hasPrefix("ok "))
        let warning = "could not record the merge position"
        _ = try peer.await("status", timeout: 20) { _ in peer.log.contains(warning) }
        // Several seconds of checks (each poll interval, 0.25 s) while it keeps failing.
        let checked = statusField(try peer.send("status"), "checks")
        _ = try peer.await("status", timeout: 30) { statusField($0, "checks") >= checked + 3 }
        XCTAssertEqual(peer.log.components(separatedBy: warning).count - 1, 1, "logged once while it keeps failing:\n\(peer.log)")
        let fixed = "DROP TRIGGER refuse_positions; DROP TRIGGER refuse_new_positions;"
        XCTAssertEqual(try run("/usr/bin/env", ["python3", "-c", sql, directory.store.path, fixed]), "")
        _ = try peer.await("status", timeout: 20) { _ in peer.log.contains("recording the merge position works again") }
        XCTAssertEqual(peer.log.components(separatedBy: warning).count - 1, 1)
    }
}
