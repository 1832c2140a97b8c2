import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// The hub at its limits, over a real Unix socket: a receiver that stops reading.
final class HubLimitsTests: XCTestCase {
    var directory: SharedDirectory!
    let storeUUID = UUID()

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)
        directory = try SharedDirectory()
        _ = FileManager.default.createFile(atPath: directory.store.path, contents: Data())
    }

    override func tearDown() { directory = nil }

    private var socketPath: String { directory.url.appendingPathComponent("limits.sock").path }

    /// A receiver that stops reading does not make the hub queue without bound: its frames are
    /// dropped once its socket is full, the other receivers get everything, and when it reads
    /// again it is told the newest token, so it catches up from the ledger.
    func testASlowReceiverIsToldToCatchUpInsteadOfQueued() async throws {
        let hub = try await SyncHub.start(try SyncHub.Configuration(socketPath: socketPath, storeUUID: storeUUID, storeFile: directory.store))
        let slow = try RawPeer(socketPath, hello: hello(1))
        let healthy = try RawPeer(socketPath, hello: hello(2))
        let publisher = try RawPeer(socketPath, hello: hello(3))
        defer { [slow, healthy, publisher].forEach { $0.close() }}
        for peer in [slow, healthy, publisher] {
            guard case .welcome? = try peer.readFrame() else { return XCTFail("no welcome") }
        }

        // 20,000 saves of about 200 bytes each: 4 MB, far more than a socket holds. The healthy
        // receiver reads on its own thread all along.
        let frames = 20_000
        let drained = Counter()
        let reader = Thread {
            while let frame = try? healthy.readFrame(timeout: 10) {
                if case .didSave = frame { drained.add() }
                if drained.value == frames { break }
            }
        }
        reader.start()
        for token in 1...frames {
            let save = Frame.DidSave(storeUUID: storeUUID, token: Int64(token), processID: 3, author: "publisher",
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
        guard case .tokenOnly(let uuid, let token, _)? = last else { return XCTFail("the slow receiver was not told to catch up: \(String(describing: last))") }
        XCTAssertEqual(uuid, storeUUID)
        XCTAssertEqual(token, Int64(frames))
        await hub.stop()
    }

    private func hello(_ pid: Int32) -> Frame.Hello {
        Frame.Hello(storeUUID: storeUUID, processID: pid, processName: "peer-\(pid)", cursor: 0)
    }
}

/// A count shared with a reader thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}

/// A peer on a plain blocking Unix socket, with a small receive buffer so that it fills fast.
final class RawPeer: @unchecked Sendable {
    let fd: Int32
    private var decoder = FrameDecoder()

    init(_ path: String, hello: Frame.Hello) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var size: Int32 = 16 * 1024
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { Glibc.close(fd); throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED) }
        try write(WireFormat.encode(.hello(hello)))
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            offset += n
        }
    }

    /// The next frame; nil when none arrives within `timeout` seconds (0: only what is there).
    func readFrame(timeout: Int = 5) throws -> Frame? {
        while true {
            if let frame = try decoder.next() { return frame }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = read(fd, &chunk, chunk.count)
            guard n > 0 else { return nil }
            decoder.append(chunk[0..<n])
        }
    }

    func close() { Glibc.close(fd) }
}
