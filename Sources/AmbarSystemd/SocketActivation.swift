import CSystemd
import Foundation

/// What went wrong adopting sockets passed by the service manager.
public enum SocketActivationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The passed file descriptors could not be read (sd_listen_fds(3) failed with `errno`).
    case unreadable(errno: Int32)
    /// A socket was passed under `name`, but it is not a listening Unix stream socket.
    case notAListeningUnixSocket(name: String, descriptor: Int32)
    /// A socket was passed under `name`, but it is not a listening stream socket.
    case notAListeningStreamSocket(name: String, descriptor: Int32)

    public var description: String {
        switch self {
        case .unreadable(let code):
            "the sockets passed by the service manager cannot be read: \(String(cString: strerror(code))). Check LISTEN_FDS/LISTEN_PID in the unit."
        case .notAListeningUnixSocket(let name, let fd):
            "the socket named \"\(name)\" (fd \(fd)) is not a listening Unix stream socket. Use ListenStream=/path in the .socket unit, with Accept=no."
        case .notAListeningStreamSocket(let name, let fd):
            "the socket named \"\(name)\" (fd \(fd)) is not a listening stream socket. Use ListenStream= (a path or an address) in the .socket unit, with Accept=no."
        }
    }
}

/// Sockets inherited from the service manager (sd_listen_fds_with_names(3)).
public enum SocketActivation {
    /// The listening socket passed under `name` (`FileDescriptorName=` in the .socket unit), or
    /// `nil` when the process was not socket-activated. A single unnamed socket is accepted too.
    ///
    /// The environment variables are unset, so child processes do not inherit them. The returned
    /// descriptor is a copy the service manager also holds: never `shutdown(2)` it and never unlink
    /// its path — the .socket unit owns it.
    public static func listeningSocket(named name: String) throws(SocketActivationError) -> Int32? {
        guard let fd = try inherited(named: name) else { return nil }
        guard sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw .notAListeningUnixSocket(name: name, descriptor: fd)
        }
        return fd
    }

    /// The listening stream socket passed under `name`, of any family (a Unix socket, or TCP on
    /// IPv4 or IPv6: `ListenStream=127.0.0.1:8080`), or `nil` when the process was not
    /// socket-activated. The same rules as ``listeningSocket(named:)`` apply.
    public static func listeningStreamSocket(named name: String) throws(SocketActivationError) -> Int32? {
        guard let fd = try inherited(named: name) else { return nil }
        guard sd_is_socket(fd, AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 1) > 0 else {
            throw .notAListeningStreamSocket(name: name, descriptor: fd)
        }
        return fd
    }

    /// The descriptor passed under `name` (or a single unnamed one), unchecked.
    private static func inherited(named name: String) throws(SocketActivationError) -> Int32? {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        guard count >= 0 else { throw .unreadable(errno: -count) }
        defer {
            if let names {
                for i in 0..<Int(count) { free(names[i]) }
                free(names)
            }
        }
        guard count > 0 else { return nil }
        var chosen: Int32?
        for i in 0..<count {
            let fdName = names?[Int(i)].map { String(cString: $0) } ?? "unknown"
            if fdName == name || (count == 1 && fdName == "unknown") { chosen = SD_LISTEN_FDS_START + i }
        }
        return chosen
    }
}
