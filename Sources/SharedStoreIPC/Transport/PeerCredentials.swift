import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// The credentials of the process at the other end of a Unix socket, as the kernel reports them:
/// its user, primary group and process ID (`SO_PEERCRED`) and its supplementary groups
/// (`SO_PEERGROUPS`, Linux 4.13 and later) — the groups the process really has, including those
/// systemd's `SupplementaryGroups=` or `DynamicUser=` give and `/etc/group` does not list, and not
/// those it dropped.
public struct PeerCredentials: Sendable, Equatable {
    /// The peer's process ID (in the hub's PID namespace; 0 when the peer is in a namespace the
    /// hub cannot see into).
    public let processID: Int32
    /// The peer's user ID.
    public let userID: UInt32
    /// The peer's primary group ID.
    public let groupID: UInt32
    /// The peer's supplementary groups; `nil` when the kernel cannot report them.
    public let supplementaryGroups: [UInt32]?

    /// Creates credentials (the hub reads them from the socket; tests may build them).
    public init(processID: Int32, userID: UInt32, groupID: UInt32, supplementaryGroups: [UInt32]?) {
        self.processID = processID
        self.userID = userID
        self.groupID = groupID
        self.supplementaryGroups = supplementaryGroups
    }

    /// `SO_PEERGROUPS` (asm-generic/socket.h), which Glibc's module does not export.
    private static let soPeerGroups: Int32 = 59

    /// Reads the credentials of a connected Unix socket.
    static func of(_ fd: CInt) -> PeerCredentials? {
        // `struct ucred` (pid_t, uid_t, gid_t) is hidden behind _GNU_SOURCE in Glibc's headers;
        // this struct has the same layout.
        struct RawCredentials {
            var pid: Int32 = 0
            var uid: UInt32 = 0
            var gid: UInt32 = 0
        }
        var credentials = RawCredentials()
        var size = socklen_t(MemoryLayout<RawCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0,
            Int(size) == MemoryLayout<RawCredentials>.size
        else { return nil }
        return PeerCredentials(
            processID: credentials.pid, userID: credentials.uid, groupID: credentials.gid,
            supplementaryGroups: supplementaryGroups(of: fd))
    }

    /// The peer's supplementary groups from `SO_PEERGROUPS`; `nil` when the kernel does not
    /// support it.
    private static func supplementaryGroups(of fd: CInt) -> [UInt32]? {
        var groups = [gid_t](repeating: 0, count: 64)
        var size = socklen_t(groups.count * MemoryLayout<gid_t>.size)
        if getsockopt(fd, SOL_SOCKET, soPeerGroups, &groups, &size) == 0 {
            return Array(groups.prefix(Int(size) / MemoryLayout<gid_t>.size))
        }
        guard errno == ERANGE else { return nil }
        // More than 64 groups: `size` now says how many bytes they take.
        groups = [gid_t](repeating: 0, count: Int(size) / MemoryLayout<gid_t>.size + 1)
        size = socklen_t(groups.count * MemoryLayout<gid_t>.size)
        guard getsockopt(fd, SOL_SOCKET, soPeerGroups, &groups, &size) == 0 else { return nil }
        return Array(groups.prefix(Int(size) / MemoryLayout<gid_t>.size))
    }

    /// Whether this peer may use a store whose file belongs to `owner`:`group`: root, the owner,
    /// or a process that has the group — as its primary group or as a supplementary group the
    /// kernel reports. Without `SO_PEERGROUPS` (kernels before 4.13) only the primary group counts.
    func isAllowed(owner: UInt32, group: UInt32) -> Bool {
        userID == 0 || userID == owner || groupID == group || (supplementaryGroups?.contains(group) ?? false)
    }
}
