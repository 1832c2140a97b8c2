import Foundation
import NIOCore
import XCTest

@testable import SharedStoreIPC

#if canImport(Glibc)
    import Glibc
#endif

/// The hub's handling of a shortage of file descriptors, in process: connections waiting on its
/// listener are refused with an error frame through a descriptor held in reserve, and a reserve
/// lost to another thread is taken again at the next shortage.
final class DescriptorShortageTests: XCTestCase {
    private var directory: URL!
    private var descriptors: [Int32] = []

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-shortage-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        for descriptor in descriptors { close(descriptor) }
        try FileManager.default.removeItem(at: directory)
    }

    /// A socket of `type`, closed after the test.
    private func socketDescriptor(_ type: Int32) throws -> Int32 {
        let descriptor = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        descriptors.append(descriptor)
        return descriptor
    }

    private func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        return address
    }

    /// A listening socket (non-blocking, as NIO makes the hub's) and a client connected to it,
    /// waiting to be accepted.
    private func listenerWithAWaitingClient() throws -> (listener: Int32, client: Int32) {
        let path = directory.appendingPathComponent("hub.sock").path
        let listener = try socketDescriptor(Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
        var serverAddress = address(path)
        let bound = withUnsafePointer(to: &serverAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(listener, 8), 0)
        let client = try socketDescriptor(Int32(SOCK_STREAM.rawValue))
        var clientAddress = address(path)
        let connected = withUnsafePointer(to: &clientAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(connected, 0)
        return (listener, client)
    }

    /// The frame the hub wrote to `client` before closing the connection.
    private func frame(readFrom client: Int32) throws -> Frame? {
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(client, &bytes, bytes.count)  // the hub closed its end: this does not block
        guard count > 0 else { return nil }
        var decoder = FrameDecoder()
        decoder.append(Array(bytes[0..<count]))
        return try decoder.next()
    }

    func testAWaitingConnectionIsRefusedWithAnErrorFrame() throws {
        let (listener, client) = try listenerWithAWaitingClient()
        let handler = DescriptorShortageHandler(listeningDescriptor: listener, maximumFrameSize: 1 << 16)
        XCTAssertTrue(handler.holdsReserve)
        handler.handleError(IOError(errnoCode: EMFILE, reason: "accept")) { XCTFail("passed on: \($0)") }
        guard case .error(let code, _)? = try frame(readFrom: client) else { return XCTFail("no error frame") }
        XCTAssertEqual(code, .tooManyPeers)
        XCTAssertTrue(handler.holdsReserve, "the reserve is held again")
    }

    func testAReserveLostToAnotherThreadIsTakenAgainAtTheNextShortage() throws {
        let (listener, client) = try listenerWithAWaitingClient()
        // The first open finds no descriptor free (another thread took it); later ones find one.
        let opens = OpenCount()
        let handler = DescriptorShortageHandler(listeningDescriptor: listener, maximumFrameSize: 1 << 16) {
            opens.next() == 1 ? -1 : DescriptorShortageHandler.openDevNull()
        }
        XCTAssertFalse(handler.holdsReserve)
        handler.handleError(IOError(errnoCode: EMFILE, reason: "accept")) { XCTFail("passed on: \($0)") }
        guard case .error(let code, _)? = try frame(readFrom: client) else { return XCTFail("the waiting connection was not refused") }
        XCTAssertEqual(code, .tooManyPeers)
        XCTAssertTrue(handler.holdsReserve)
    }

    func testOtherErrorsArePassedOn() throws {
        let handler = DescriptorShortageHandler(listeningDescriptor: -1, maximumFrameSize: 1 << 16)
        var passed: [any Error] = []
        handler.handleError(IOError(errnoCode: ECONNABORTED, reason: "accept")) { passed.append($0) }
        XCTAssertEqual((passed.first as? IOError)?.errnoCode, ECONNABORTED)
    }
}

/// Counts the reserve's opens.
private final class OpenCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// The number of this open, from 1.
    func next() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }
}
