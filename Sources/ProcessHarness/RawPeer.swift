import Foundation
import SharedStoreIPC

/// A client of the hub on a plain blocking Unix socket, with no library code in between: for
/// sending the hub anything, well-formed or not, and reading exactly what it answers.
public final class RawPeer: @unchecked Sendable {
    public let fd: Int32
    private var decoder = FrameDecoder()

    /// Connects to the socket at `path`; `receiveBuffer` shrinks the socket's receive buffer.
    public init(_ path: String, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED
            Glibc.close(fd)
            throw POSIXError(code)
        }
    }

    /// Wraps a connected socket (one ``RawListener`` accepted); takes ownership of it.
    public init(descriptor: Int32) {
        fd = descriptor
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            offset += n
        }
    }

    /// The next frame; nil when none arrives within `timeout` seconds (0: only what is there)
    /// or the hub closed the connection.
    public func readFrame(timeout: Int = 5) throws -> Frame? {
        while true {
            if let frame = try decoder.next() { return frame }
            guard let chunk = readChunk(timeout: timeout) else { return nil }
            decoder.append(chunk)
        }
    }

    /// Every byte the hub sends until it closes the connection (or is silent for `timeout` seconds).
    public func readToEnd(timeout: Int = 5) -> [UInt8] {
        var bytes: [UInt8] = []
        while let chunk = readChunk(timeout: timeout) { bytes += chunk }
        return bytes
    }

    private func readChunk(timeout: Int) -> ArraySlice<UInt8>? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = read(fd, &chunk, chunk.count)
        return n > 0 ? chunk[0..<n] : nil
    }

    /// Whether the other end closed the connection within `timeout` seconds (no bytes first).
    public func sawEndOfStream(timeout: Int = 5) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return false }
        var byte: UInt8 = 0
        return read(fd, &byte, 1) == 0
    }

    private var closed = false

    /// Closes the socket; a second call does nothing (the descriptor may belong to another socket by then).
    public func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }
}
