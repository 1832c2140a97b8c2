import Foundation

/// A test-owned `$NOTIFY_SOCKET`: a Unix datagram socket that receives what a process sends with
/// sd_notify(3), the way the service manager would. Closed and removed when released. Its
/// descriptor never changes; read it from one thread at a time.
public final class NotifySocket: @unchecked Sendable {
    /// The socket's path, for `NOTIFY_SOCKET`.
    public let path: String
    private let fd: Int32

    /// Binds a datagram socket at `path`.
    public init(path: String) throws {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw POSIXError(.ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// The next message, or `nil` if none arrives before `deadline`.
    public func receive(until deadline: Date) -> String? {
        while Date() < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 50) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { return String(decoding: buffer[0..<n], as: UTF8.self) }
        }
        return nil
    }
}
