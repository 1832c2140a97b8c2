import AmbarCore
import Foundation

/// A PostgreSQL connection URL, as libpq and most tools spell it:
/// `postgres://user:password@host:port/database?sslmode=require`.
///
/// Recognised query parameters: `sslmode` (`disable`, `prefer` — the default, `require`,
/// `verify-ca`, `verify-full`), `sslrootcert` (a PEM file of trusted roots for the `verify-`
/// modes), `host` (a directory holding the server's Unix socket, instead of TCP),
/// `connect_timeout` and `statement_timeout` (seconds; how long a connection attempt, and a
/// statement's answer, may take before the server counts as unreachable),
/// `idle_in_transaction_timeout` (seconds, 10 by default: the server ends a session of this
/// process that sits inside a transaction that long — a process frozen or cut off mid-transaction
/// — so that its locks do not hold every other host back), `application_name`. The password may also
/// come from `$PGPASSWORD`, or from a file named by `password_file` (systemd's
/// `LoadCredential=` puts credentials in such files).
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    /// How the connection uses TLS.
    public enum TLSMode: String, Sendable, Hashable {
        /// Never TLS.
        case disable
        /// TLS when the server offers it, without checking its certificate.
        case prefer
        /// TLS always, without checking the certificate.
        case require
        /// TLS always; the certificate must be signed by a trusted root.
        case verifyCA = "verify-ca"
        /// TLS always; the certificate must be signed by a trusted root and name the host.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode
    public var rootCertificatePath: String?
    /// A directory holding the server's socket (`.s.PGSQL.<port>`), instead of TCP to `host`.
    public var socketDirectory: String?
    public var connectTimeout: TimeInterval
    public var statementTimeout: TimeInterval
    /// How long a session may sit idle inside a transaction before the server ends it (and
    /// rolls the transaction back): PostgreSQL's `idle_in_transaction_session_timeout`, set at
    /// each connection. Ambar's transactions never wait on anything but the server; a session
    /// idle in one belongs to a process frozen (SIGSTOP, a stalled VM) or cut off, whose row
    /// locks — on the ledger's head, a consumer's ownership — would otherwise stop every writer
    /// and every other copy of a consumer until it came back.
    public var idleInTransactionTimeout: TimeInterval
    /// The name the server shows for the connections (`pg_stat_activity.application_name`);
    /// "ambar" (and "ambar-listen" for the doorbell's) by default.
    public var applicationName: String?

    /// Reads a URL (`postgres://` or `postgresql://`).
    ///
    /// - Throws: ``AmbarError/invalidArgument(_:)`` naming what is wrong; the message never
    ///   contains the password.
    public init(_ url: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws(AmbarError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql",
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else {
            throw .invalidArgument("a PostgreSQL store URL starts with postgres:// or postgresql:// (got \(Self.redacted(url)))")
        }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let known: Set<String> = [
            "sslmode", "sslrootcert", "host", "connect_timeout", "statement_timeout", "idle_in_transaction_timeout", "password_file", "application_name",
        ]
        if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
            let name = unknown.count <= 32 && unknown.allSatisfy({ $0.isLetter || $0 == "_" }) ? "'\(unknown)'" : "(a malformed one)"
            throw .invalidArgument("\(Self.redacted(url)): unknown parameter \(name) (known: \(known.sorted().joined(separator: ", ")))")
        }
        self.socketDirectory = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        self.host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? (socketDirectory == nil ? "localhost" : "")
        self.port = components.port ?? 5432
        self.user = components.user.flatMap { $0.removingPercentEncoding } ?? environment["PGUSER"] ?? "postgres"
        var password = components.password.flatMap { $0.removingPercentEncoding }
        if password == nil, let file = query["password_file"] {
            // try?: the error below names the file that cannot be read
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw .invalidArgument("\(Self.redacted(url)): cannot read password_file \(file)")
            }
            password = text.trimmingCharacters(in: .newlines)
        }
        self.password = password ?? environment["PGPASSWORD"]
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.database = path.isEmpty ? self.user : path
        let modeText = query["sslmode"] ?? "prefer"
        guard let mode = TLSMode(rawValue: modeText) else {
            throw .invalidArgument("\(Self.redacted(url)): sslmode '\(modeText)' is not one of disable, prefer, require, verify-ca, verify-full")
        }
        self.tls = mode
        self.rootCertificatePath = query["sslrootcert"]
        func seconds(_ name: String, _ fallback: TimeInterval) throws(AmbarError) -> TimeInterval {
            guard let text = query[name] else { return fallback }
            guard let value = TimeInterval(text), value > 0 else {
                throw .invalidArgument("\(Self.redacted(url)): \(name) must be a positive number of seconds (got '\(text)')")
            }
            return value
        }
        self.applicationName = query["application_name"]
        self.connectTimeout = try seconds("connect_timeout", 10)
        self.statementTimeout = try seconds("statement_timeout", 60)
        self.idleInTransactionTimeout = try seconds("idle_in_transaction_timeout", 10)
    }

    /// The URL without its password, for logs, `status` and errors.
    public var description: String {
        let place = socketDirectory.map { "\($0)/.s.PGSQL.\(port)" } ?? "\(host):\(port)"
        return "postgres://\(user)@\(place)/\(database)"
    }

    /// `url` for messages: scheme, user, host, port and database only — never a password, never
    /// the query (which may hold one), and nothing of a user part that is not a plain name (a
    /// malformed URL may hide its password there).
    public static func redacted(_ url: URL) -> String {
        let text = url.absoluteString
        guard let schemeEnd = text.range(of: "://") else { return "(a URL that cannot be read)" }
        var rest = text[schemeEnd.upperBound...]
        var user = ""
        if let at = rest.lastIndex(of: "@") {
            let name = rest[..<at].prefix(while: { $0 != ":" })
            user = (!name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || "_.-".contains($0) } ? String(name) : "***") + "@"
            rest = rest[rest.index(after: at)...]
        }
        return text[..<schemeEnd.upperBound] + user + rest.prefix(while: { $0 != "?" && $0 != "#" })
    }

    /// Whether `text` looks like a PostgreSQL URL (`postgres://` or `postgresql://`).
    public static func isPostgresURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }
}
