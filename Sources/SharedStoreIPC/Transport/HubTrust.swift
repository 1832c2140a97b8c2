import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Which processes a client accepts as the hub, checked from the kernel's credentials of the
/// process listening on the socket (`SO_PEERCRED`) before anything is sent to it: root, this
/// process's own user, the owner of the store file (for a store on a database server, of the
/// socket's directory), or a process that has the file's group. A socket planted by another user
/// in a directory others can write gets no `hello` and no did-saves; the refusal says whose it is.
///
/// ```swift
/// let trust = try HubTrust(ownerOf: storeFile)
/// let client = try await SyncClient.connect(socketPath: path, hello: hello, group: group, trustedHub: trust,
///                                           onFrame: { _ in }, onClose: {})
/// ```
public struct HubTrust: Sendable, Equatable {
    /// The user whose hub is accepted besides root and this process's user.
    public let owner: UInt32
    /// A group whose members' hub is accepted.
    public let group: UInt32

    /// Accepts root, this process's user and `owner`, and members of `group`.
    public init(owner: UInt32, group: UInt32) {
        self.owner = owner
        self.group = group
    }

    /// Accepts root, this process's user, and the owner and group of the file or directory at
    /// `url`.
    ///
    /// - Throws: the file system's error when `url` cannot be read.
    public init(ownerOf url: URL) throws {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        self.owner = (attributes[.ownerAccountID] as? NSNumber)?.uint32Value ?? getuid()
        self.group = (attributes[.groupOwnerAccountID] as? NSNumber)?.uint32Value ?? getgid()
    }

    /// Root and this process's own user and primary group only.
    public static var currentUser: HubTrust { HubTrust(owner: getuid(), group: getgid()) }

    /// Whether a hub with `credentials` is accepted.
    public func admits(_ credentials: PeerCredentials) -> Bool {
        credentials.userID == getuid() || credentials.isAllowed(owner: owner, group: group)
    }

    /// Why a hub with `credentials` is not accepted, for the error and the log.
    func refusal(of credentials: PeerCredentials) -> String {
        "the process listening on the hub's socket (pid \(credentials.processID), uid \(credentials.userID), gid \(credentials.groupID)) is neither root, "
            + "this process's user \(getuid()), the store's owner \(owner) nor in its group \(group): it may be another user's socket planted in a "
            + "directory others can write; nothing was sent to it. Remove it, and keep the socket in a directory only the store's users can write"
    }
}
