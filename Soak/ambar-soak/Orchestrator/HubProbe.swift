import Foundation

/// Where the hub is, seen from outside: who holds the hub lock, and whether the socket answers.
struct HubProbe {
    let socketPath: String
    let lockPath: String

    init(directory: URL) {
        socketPath = directory.appendingPathComponent(".ambar/sync.sock").path
        lockPath = directory.appendingPathComponent(".ambar/hub.lock").path
    }

    /// The process holding the hub lock (from /proc/locks), if any.
    func holder() -> pid_t? {
        var info = stat()
        guard stat(lockPath, &info) == 0,
            let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return nil }
        let suffix = ":\(info.st_ino)"
        for line in locks.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // "1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF"; a blocked waiter has "->".
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5].hasSuffix(suffix) else { continue }
            return pid_t(fields[4])
        }
        return nil
    }

    /// Whether a hub accepts connections on the socket now.
    func answers() -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(socketPath.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }
}
