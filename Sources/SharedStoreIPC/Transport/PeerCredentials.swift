import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The credentials of the process at the other end of a Unix socket (SO_PEERCRED).
public struct PeerCredentials: Sendable, Equatable {
    /// The peer's process ID.
    public let processID: Int32
    /// The peer's user ID.
    public let userID: UInt32
    /// The peer's primary group ID.
    public let groupID: UInt32

    /// Reads the credentials of a connected Unix socket.
    static func of(_ fd: CInt) -> PeerCredentials? {
        // `struct ucred` (pid_t, uid_t, gid_t) is hidden behind _GNU_SOURCE in Glibc's headers;
        // this struct has the same layout.
        struct RawCredentials { var pid: Int32 = 0; var uid: UInt32 = 0; var gid: UInt32 = 0 }
        var credentials = RawCredentials()
        var size = socklen_t(MemoryLayout<RawCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0,
              Int(size) == MemoryLayout<RawCredentials>.size else { return nil }
        return PeerCredentials(processID: credentials.pid, userID: credentials.uid, groupID: credentials.gid)
    }

    /// Whether this peer may use a store whose file belongs to `owner`:`group`: the owner, a
    /// member of the group (primary or supplementary), or root.
    func isAllowed(owner: UInt32, group: UInt32) -> Bool {
        if userID == 0 || userID == owner || groupID == group { return true }
        guard let entry = getpwuid(userID), let name = entry.pointee.pw_name else { return false }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, entry.pointee.pw_gid, &groups, &count) == -1 {
            groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(name, entry.pointee.pw_gid, &groups, &count) != -1 else { return false }
        }
        return groups.prefix(Int(count)).contains(group)
    }
}
