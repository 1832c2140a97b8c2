import ArgumentParser
import Foundation

/// Where `sync-agent serve` listens: `unix:PATH` (or an absolute path), or `HOST:PORT` (`[::1]:PORT`
/// for IPv6). Only a Unix socket or a loopback address may go without a bearer token.
enum ListenAddress: Equatable, CustomStringConvertible {
    case unix(path: String)
    case tcp(host: String, port: Int)

    /// Parses `text`, given as `option`; throws a `ValidationError` that shows the accepted forms.
    init(parsing text: String, option: String = "--listen") throws {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst("unix:".count))
            guard !path.isEmpty else { throw ValidationError("\(option) unix: needs a socket path (unix:/run/ambar/http.sock)") }
            self = .unix(path: path)
            return
        }
        if text.hasPrefix("/") {
            self = .unix(path: text)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            throw ValidationError("\(option) takes unix:PATH, HOST:PORT or [IPv6]:PORT (e.g. 127.0.0.1:8080), not \(text)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw ValidationError("\(option) \(text) names no host; use 127.0.0.1:\(port) for loopback") }
        self = .tcp(host: host, port: port)
    }

    /// The address a listening socket is bound to (`getsockname(2)`), or `nil` for a family other
    /// than Unix, IPv4 or IPv6.
    init?(boundSocket fd: Int32) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard got == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_UNIX:
            let path = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_un.self, capacity: 1) { address in
                    withUnsafePointer(to: address.pointee.sun_path) { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
                }
            }
            self = .unix(path: path)
        case AF_INET:
            let (host, port) = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address -> (String, Int) in
                    var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                    var ip = address.pointee.sin_addr
                    inet_ntop(AF_INET, &ip, &text, socklen_t(text.count))
                    return (Self.string(text), Int(UInt16(bigEndian: address.pointee.sin_port)))
                }
            }
            self = .tcp(host: host, port: port)
        case AF_INET6:
            let (host, port) = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address -> (String, Int) in
                    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
                    var ip = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &ip, &text, socklen_t(text.count))
                    return (Self.string(text), Int(UInt16(bigEndian: address.pointee.sin6_port)))
                }
            }
            self = .tcp(host: host, port: port)
        default:
            return nil
        }
    }

    /// A C string in a buffer, up to its terminating zero.
    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether only this machine can reach it: a Unix socket (file permissions guard it), a
    /// numeric loopback address, or `localhost`. A name is never taken for loopback by its
    /// look: `127.attacker.example` resolves wherever its owner points it.
    var isLocal: Bool {
        switch self {
        case .unix: return true
        case .tcp(let host, _): return host == "localhost" || Self.isNumericLoopback(host)
        }
    }

    /// Whether `host` is a loopback address written as numbers: IPv4 in 127.0.0.0/8 (as four
    /// decimal parts), IPv6 `::1`, or IPv4-mapped `::ffff:127.x.y.z`.
    static func isNumericLoopback(_ host: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        let isOne = bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
        let isMappedLoopback = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127
        return isOne || isMappedLoopback
    }

    var description: String {
        switch self {
        case .unix(let path): return "unix:\(path)"
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }
}
