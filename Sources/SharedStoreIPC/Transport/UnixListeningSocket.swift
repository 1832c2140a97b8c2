import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A listening Unix socket the hub binds itself, so that it — not SwiftNIO, which removes the
/// path when a listener it bound closes — decides when the file at the path goes: only while it
/// is still this hub's (a hub that handed over must not remove its successor's socket).
enum UnixListeningSocket {
    /// Why a listening socket could not be made.
    struct Failure: Error, CustomStringConvertible {
        let path: String
        let step: String
        let code: Int32
        var description: String { "cannot \(step) the hub socket \(path): \(String(cString: strerror(code)))" }
    }

    /// Binds and listens on `path`, first removing a socket file left there (never another kind
    /// of file); returns the descriptor.
    static func bind(path: String, backlog: Int32) throws -> Int32 {
        var info = stat()
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = Array(path.utf8)
        guard bytes.count < capacity else { throw Failure(path: path, step: "bind (the path is longer than \(capacity - 1) bytes)", code: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(path: path, step: "create", code: errno) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw Failure(path: path, step: "bind", code: code)
        }
        guard listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw Failure(path: path, step: "listen on", code: code)
        }
        return fd
    }
}
