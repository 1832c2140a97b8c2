import Foundation

/// The lock that makes one process the hub of a socket: `<socket directory>/hub.lock`, held with
/// flock(2) for as long as this value lives. The embedded election and the `sync-agent hub`
/// daemon take the same lock, so there is never a second hub beside either.
public final class HubElectionLock: Sendable {
    /// The lock file.
    public let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The lock file for the hub of `socketPath`.
    public static func path(forSocket socketPath: String) -> String {
        URL(fileURLWithPath: socketPath).deletingLastPathComponent().appendingPathComponent("hub.lock").path
    }

    /// Takes the lock without waiting; `nil` when another process holds it or the lock file
    /// cannot be created (e.g. a directory owned by the .socket unit).
    public static func take(forSocket socketPath: String) -> HubElectionLock? {
        let path = path(forSocket: socketPath)
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o660)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        return HubElectionLock(path: path, descriptor: fd)
    }
}
