import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file's identity — its device and inode — to tell the file a process opened from another one
/// put at the same path (a store restored with `mv`, a socket bound again).
package struct FileIdentity: Equatable, Sendable, CustomStringConvertible {
    package let device: UInt64
    package let inode: UInt64

    /// The identity of the file at `path`, not following a symbolic link; nil when there is none.
    package init?(path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// The identity of an open file, from its `fstat`.
    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    package var description: String { "device \(device), inode \(inode)" }
}
