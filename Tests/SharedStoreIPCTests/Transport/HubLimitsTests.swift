import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// The hub at its limits, over a real Unix socket: a receiver that stops reading, and more
/// processes than it serves.
final class HubLimitsTests: XCTestCase {
    var directory: TemporaryDirectory!
    let storeUUID = UUID()

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)
        directory = try TemporaryDirectory()
        _ = FileManager.default.createFile(atPath: directory.store.path, contents: Data())
    }

    override func tearDown() { directory = nil }

    private var socketPath: String { directory.url.appendingPathComponent("limits.sock").path }

    /// A receiver that stops reading does not make the hub queue without bound: its frames are
    /// dropped once its backlog passes the configured bound, the other receivers get everything, and when it reads
    /// again it is told the newest token, so it catches up from the ledger.
    func testASlowReceiverIsToldToCatchUpInsteadOfQueued() async throws {
        var configuration = try SyncHub.Configuration(socketPath: socketPath, storeUUID: storeUUID, storeFile: directory.store)
        configuration.maximumBacklogBytes = 64 * 1024  // well below the 4 MB this test sends
        let hub = try await SyncHub.start(configuration)
        do {
            try await slowReceiver(hub)
        } catch {
            await hub.stop()
            throw error
        }
        await hub.stop()  // also after a failed assertion: the test leaves no event loop behind
    }

    private func slowReceiver(_ hub: SyncHub) async throws {
        // Small receive buffers, so that a receiver that stops reading fills up fast.
        let slow = try RawPeer(socketPath, receiveBuffer: 16 * 1024)
        defer { slow.close() }
        let healthy = try RawPeer(socketPath, receiveBuffer: 16 * 1024)
        defer { healthy.close() }
        let publisher = try RawPeer(socketPath)
        defer { publisher.close() }
        for (pid, peer) in [slow, healthy, publisher].enumerated() {
            try peer.write(WireFormat.encode(.hello(hello(Int32(pid + 1)))))
            guard case .welcome? = try peer.readFrame() else { return XCTFail("no welcome") }
        }

        // 20,000 saves of about 200 bytes each: 4 MB, far more than a socket holds. The healthy
        // receiver reads on its own thread all along, and the publisher stays at most `window`
        // frames (about 13 KB) ahead of it: a receiver that keeps up, whatever else runs on the
        // machine, whose backlog never nears the bound.
        let frames = 20_000
        let drained = Counter()
        let reader = Thread {
            while let frame = try? healthy.readFrame(timeout: 10) {
                if case .didSave = frame { drained.add() }
                if drained.value == frames { break }
            }
        }
        reader.start()
        let window = 64
        for token in 1...frames {
            if token > window, !drained.wait(atLeast: token - window, timeout: 20) {
                return XCTFail("the healthy receiver got \(drained.value) of the first \(token - window) frames within 20 s")
            }
            let save = Frame.DidSave(
                storeUUID: storeUUID, token: Int64(token), processID: 3, instanceID: ProcessInstance.id, author: "publisher",
                changes: ["Item": .init(inserted: Array(Int64(token * 40)..<Int64(token * 40 + 40)))])
            try publisher.write(WireFormat.encode(.didSave(save)))
        }
        let deadline = Date().addingTimeInterval(30)
        while drained.value < frames && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertEqual(drained.value, frames, "a receiver that keeps up gets every frame")
        let dropped = await hub.droppedFrameCount()
        XCTAssertGreaterThan(dropped, 0, "the hub dropped the slow receiver's frames instead of queueing them")

        // The slow receiver now reads: what was queued before it fell behind, then a token-only
        // frame with the newest token.
        var received = 0
        var last: Frame?
        while let frame = try slow.readFrame(timeout: 5) {
            if case .didSave = frame { received += 1 }
            last = frame
            if case .tokenOnly = frame { break }
        }
        XCTAssertLessThan(received, frames)
        XCTAssertEqual(received + dropped, frames, "each frame was either delivered or counted as dropped")
        guard case .tokenOnly(let uuid, let token, _, _)? = last else {
            return XCTFail("the slow receiver was not told to catch up: \(String(describing: last))")
        }
        XCTAssertEqual(uuid, storeUUID)
        XCTAssertEqual(token, Int64(frames))
    }

    /// Beyond `maximumPeers` a process gets a clear refusal (an error frame naming the limit, then
    /// the connection closes); the peers already served are not affected, and a place that frees
    /// up is taken by the next process.
    func testBeyondThePeerLimitAProcessIsRefusedClearly() async throws {
        var configuration = try SyncHub.Configuration(socketPath: socketPath, storeUUID: storeUUID, storeFile: directory.store)
        configuration.maximumPeers = 2
        let hub = try await SyncHub.start(configuration)
        do {
            try peerLimit()
        } catch {
            await hub.stop()
            throw error
        }
        await hub.stop()
    }

    private func peerLimit() throws {
        let first = try RawPeer(socketPath)
        let second = try RawPeer(socketPath)
        defer { [first, second].forEach { $0.close() } }
        for (pid, peer) in [first, second].enumerated() {
            try peer.write(WireFormat.encode(.hello(hello(Int32(pid + 1)))))
            guard case .welcome? = try peer.readFrame() else { return XCTFail("peer \(pid + 1) was not welcomed") }
        }
        let third = try RawPeer(socketPath)
        defer { third.close() }
        try third.write(WireFormat.encode(.hello(hello(3))))
        guard case .error(let code, let message)? = try third.readFrame() else { return XCTFail("the third peer got no refusal") }
        XCTAssertEqual(code, .tooManyPeers)
        XCTAssertTrue(message.contains("2 processes"), message)
        XCTAssertTrue(third.sawEndOfStream(timeout: 5), "then the hub closed the connection")

        // The peers served carry on: a save from the first reaches the second.
        let save = Frame.DidSave(
            storeUUID: storeUUID, token: 1, processID: 1, instanceID: ProcessInstance.id, author: nil, changes: ["Item": .init(inserted: [1])])
        try first.write(WireFormat.encode(.didSave(save)))
        guard case .didSave(let relayed)? = try second.readFrame() else { return XCTFail("the second peer got nothing") }
        XCTAssertEqual(relayed.token, 1)

        // A place frees up: the next process is welcomed.
        first.close()
        var welcomed = false
        for attempt in 0..<50 where !welcomed {
            if attempt > 0 { Thread.sleep(forTimeInterval: 0.1) }
            let next = try RawPeer(socketPath)
            defer { next.close() }
            try next.write(WireFormat.encode(.hello(hello(4))))
            if case .welcome? = try next.readFrame() { welcomed = true }
        }
        XCTAssertTrue(welcomed, "a freed place is taken by the next process")
    }

    /// Connections that never say hello cannot lock processes out: they are capped apart from
    /// the peers (beyond the cap a connection is refused at once), and each is closed at the
    /// handshake deadline. A peer that says hello is served throughout.
    func testSilentConnectionsAreCappedApartAndClosedAtTheHandshakeDeadline() async throws {
        var configuration = try SyncHub.Configuration(socketPath: socketPath, storeUUID: storeUUID, storeFile: directory.store)
        configuration.maximumPeers = 4
        configuration.maximumPendingHandshakes = 8
        configuration.handshakeTimeout = .seconds(1)
        let hub = try await SyncHub.start(configuration)
        do {
            try silentConnections()
        } catch {
            await hub.stop()
            throw error
        }
        await hub.stop()
    }

    private func silentConnections() throws {
        let silent = try (0..<8).map { _ in try RawPeer(socketPath) }
        defer { silent.forEach { $0.close() } }
        // The ninth silent connection is refused at once; a peer that says hello is welcomed
        // although 8 silent connections wait (more than maximumPeers).
        let ninth = try RawPeer(socketPath)
        defer { ninth.close() }
        guard case .error(.tooManyPeers, let message)? = try ninth.readFrame() else { return XCTFail("the ninth silent connection was not refused") }
        XCTAssertTrue(message.contains("waiting for their handshake"), message)
        // Closed at the deadline, each silent connection frees its place.
        for connection in silent { XCTAssertTrue(connection.sawEndOfStream(timeout: 5), "a silent connection is closed at the handshake deadline") }
        let peer = try RawPeer(socketPath)
        defer { peer.close() }
        try peer.write(WireFormat.encode(.hello(hello(1))))
        guard case .welcome? = try peer.readFrame() else { return XCTFail("a process was locked out by silent connections") }
        // An admitted peer is not closed at the deadline: it still answers a ping after it.
        XCTAssertNil(try peer.readFrame(timeout: 2), "nothing (no close) at the handshake deadline")
        try peer.write(WireFormat.encode(.ping(7)))
        XCTAssertEqual(try peer.readFrame(), .pong(7))
    }

    /// A peer that asks and never reads gets no more replies queued than the backlog bound.
    func testRepliesToAPeerThatDoesNotReadAreBounded() async throws {
        var configuration = try SyncHub.Configuration(socketPath: socketPath, storeUUID: storeUUID, storeFile: directory.store)
        configuration.maximumBacklogBytes = 16 * 1024
        let hub = try await SyncHub.start(configuration)
        do {
            let peer = try RawPeer(socketPath, receiveBuffer: 4096)
            defer { peer.close() }
            try peer.write(WireFormat.encode(.hello(hello(1))))
            guard case .welcome? = try peer.readFrame() else { throw PeerNotWelcomed() }
            // 100,000 pings (2.1 MB of pongs) that it never reads.
            let ping = try WireFormat.encode(.ping(1))
            try peer.write(Array((0..<100_000).map { _ in ping }.joined()))
            // The hub answered what fit and dropped the rest: it counts them.
            var dropped = 0
            for _ in 0..<200 where dropped == 0 {
                dropped = await hub.droppedFrameCount()
                if dropped == 0 { try await Task.sleep(for: .milliseconds(50)) }
            }
            XCTAssertGreaterThan(dropped, 0, "replies beyond the backlog bound were dropped, not queued")
        } catch {
            await hub.stop()
            throw error
        }
        await hub.stop()
    }

    /// A hub that stops closes every connection it accepted, admitted or not (its event loops
    /// are NIO's shared ones and keep running: closing its listener alone would leave them open,
    /// and their processes would not know to elect a new hub).
    func testStoppingTheHubClosesEveryConnection() async throws {
        let hub = try await SyncHub.start(try SyncHub.Configuration(socketPath: socketPath, storeUUID: storeUUID, storeFile: directory.store))
        // The silent one connects first: the kernel hands connections to the hub in order, so
        // once the other is welcomed, the hub has accepted both.
        let silent = try RawPeer(socketPath)
        defer { silent.close() }
        let admitted = try RawPeer(socketPath)
        defer { admitted.close() }
        try admitted.write(WireFormat.encode(.hello(hello(1))))
        let welcome = try admitted.readFrame()
        await hub.stop()
        guard case .welcome? = welcome else { return XCTFail("no welcome: \(String(describing: welcome))") }
        XCTAssertTrue(admitted.sawEndOfStream(), "the admitted peer's connection was closed")
        XCTAssertTrue(silent.sawEndOfStream(), "so was the one still in its handshake")
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath), "the socket file went with the hub")
    }

    private func hello(_ pid: Int32) -> Frame.Hello {
        Frame.Hello(storeUUID: storeUUID, processID: pid, instanceID: ProcessInstance.id, processName: "peer-\(pid)", cursor: 0)
    }
}

/// A count shared with a reader thread.
final class Counter: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0
    func add() {
        condition.lock()
        count += 1
        condition.broadcast()
        condition.unlock()
    }
    var value: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }
    /// Waits until the count reaches `target`; false if `timeout` seconds pass first.
    func wait(atLeast target: Int, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while count < target {
            if !condition.wait(until: deadline) { return count >= target }
        }
        return true
    }
}

/// The hub did not welcome a test's peer.
struct PeerNotWelcomed: Error {}
