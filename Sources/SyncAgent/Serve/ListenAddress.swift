import ArgumentParser
import Foundation

/// Where `sync-agent serve` listens: `unix:PATH` (or an absolute path), or `HOST:PORT` (`[::1]:PORT`
/// for IPv6). Only a Unix socket or a loopback address may go without a bearer token.
enum ListenAddress: Equatable, CustomStringConvertible {
    case unix(path: String)
    case tcp(host: String, port: Int)

    /// Parses `text`; throws a `ValidationError` that shows the accepted forms.
    init(parsing text: String) throws {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst("unix:".count))
            guard !path.isEmpty else { throw ValidationError("--listen unix: needs a socket path (unix:/run/ambar/http.sock)") }
            self = .unix(path: path)
            return
        }
        if text.hasPrefix("/") {
            self = .unix(path: text)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            throw ValidationError("--listen takes unix:PATH, HOST:PORT or [IPv6]:PORT (e.g. 127.0.0.1:8080), not \(text)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw ValidationError("--listen \(text) names no host; use 127.0.0.1:\(port) for loopback") }
        self = .tcp(host: host, port: port)
    }

    /// Whether only this machine can reach it: a Unix socket (file permissions guard it) or a
    /// loopback address.
    var isLocal: Bool {
        switch self {
        case .unix: return true
        case .tcp(let host, _): return host == "localhost" || host == "::1" || host.hasPrefix("127.")
        }
    }

    var description: String {
        switch self {
        case .unix(let path): return "unix:\(path)"
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }
}
