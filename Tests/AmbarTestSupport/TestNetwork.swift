import Foundation

/// Hosts of a test's own: network namespaces joined by veth pairs to one "server" namespace,
/// each link a /24 of its own (10.<net>.<host>.1 on the server's side, .2 on the host's). Removed
/// when released, and also by the next test run if this process dies first (names carry the PID).
public final class TestNetwork {
    /// Why the machine cannot make namespaces (the tests that need them skip, saying so).
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    public let server: String
    public let hosts: [String]
    private let prefix: String
    private let net: Int

    /// A server namespace and `hostCount` host namespaces.
    public init(hostCount: Int) throws {
        Self.removeStale()
        let prefix = "ambt\(getpid())"
        self.prefix = prefix
        net = 100 + Int(getpid() % 100)
        server = "\(prefix)-srv"
        hosts = (1...hostCount).map { "\(prefix)-h\($0)" }
        do {
            try Self.ip(["netns", "add", server])
            try Self.ip(["netns", "exec", server, "ip", "link", "set", "lo", "up"])
            for (i, host) in hosts.enumerated() {
                let n = i + 1
                try Self.ip(["netns", "add", host])
                try Self.ip(["netns", "exec", host, "ip", "link", "set", "lo", "up"])
                try Self.ip(["link", "add", "\(prefix)s\(n)", "type", "veth", "peer", "name", "\(prefix)h\(n)"])
                try Self.ip(["link", "set", "\(prefix)s\(n)", "netns", server])
                try Self.ip(["link", "set", "\(prefix)h\(n)", "netns", host])
                try Self.ip(["netns", "exec", server, "ip", "addr", "add", "\(serverAddress(host: n))/24", "dev", "\(prefix)s\(n)"])
                try Self.ip(["netns", "exec", server, "ip", "link", "set", "\(prefix)s\(n)", "up"])
                try Self.ip(["netns", "exec", host, "ip", "addr", "add", "10.\(net).\(n).2/24", "dev", "\(prefix)h\(n)"])
                try Self.ip(["netns", "exec", host, "ip", "link", "set", "\(prefix)h\(n)", "up"])
            }
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    /// The server's address on host `n`'s link (1-based).
    public func serverAddress(host n: Int) -> String { "10.\(net).\(n).1" }

    /// Every server-side address, comma-separated (PostgreSQL's `listen_addresses`).
    public var serverAddresses: String { (1...hosts.count).map { serverAddress(host: $0) }.joined(separator: ",") }

    /// Cuts (or restores) host `n`'s link, on the server's side.
    public func setLink(host n: Int, up: Bool) throws {
        try Self.ip(["netns", "exec", server, "ip", "link", "set", "\(prefix)s\(n)", up ? "up" : "down"])
    }

    /// The command prefix that runs a program in namespace `name`.
    public static func launcher(_ name: String) -> [String] { ["/usr/sbin/ip", "netns", "exec", name] }

    private func remove() {
        for name in [server] + hosts { _ = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/sbin/ip"), ["netns", "del", name], timeout: 10) }
    }

    /// Namespaces left by test processes that died.
    private static func removeStale() {
        guard let list = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/sbin/ip"), ["netns", "list"], timeout: 10) else { return }
        for line in list.output.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            guard name.hasPrefix("ambt"), let pid = Int32(name.dropFirst(4).prefix(while: \.isNumber)), kill(pid, 0) != 0 else { continue }
            _ = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/sbin/ip"), ["netns", "del", name], timeout: 10)
        }
    }

    @discardableResult
    static func ip(_ arguments: [String]) throws -> String {
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/sbin/ip"), arguments, timeout: 20)
        guard result.status == 0 else {
            throw Unavailable(description: "ip \(arguments.joined(separator: " ")) failed: \(result.error.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return result.output
    }
}
