import Foundation

/// A listening Unix socket on a plain blocking descriptor, with no library code in between: for
/// playing the hub's part exactly as a test needs it (answering, or not reading).
public final class RawListener: @unchecked Sendable {
    public let fd: Int32
    public let path: String

    /// Binds and listens on `path` (which must not exist).
    public init(_ path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EADDRINUSE
            Glibc.close(fd)
            throw POSIXError(code)
        }
    }

    /// The next connection, within `timeout` seconds; `receiveBuffer` shrinks its receive buffer
    /// (so that a client's send side fills fast while the test does not read).
    public func accept(timeout: Int = 10, receiveBuffer: Int32? = nil) throws -> RawPeer {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { throw POSIXError(.ETIMEDOUT) }
        let connection = Glibc.accept(fd, nil, nil)
        guard connection >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        if var size = receiveBuffer {
            setsockopt(connection, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        return RawPeer(descriptor: connection)
    }

    /// Stops listening and removes the socket file.
    public func close() {
        Glibc.close(fd)
        unlink(path)
    }
}
