import AmbarPostgres
import AmbarStack
import Foundation
import Synchronization

/// The private PostgreSQL server of a test process, started once by `scripts/postgres-server`
/// in a temporary directory and stopped (the directory removed) when the process ends, however
/// it ends. Each store a test asks for is a database of its own.
public final class PostgresTestServer: Sendable {
    /// Why no server could be started (the tests that need one skip, saying this), unless
    /// `AMBAR_REQUIRE_POSTGRES` is set, when they fail.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public let directory: String
    public let port: Int
    /// The command prefix the server runs under (`ip netns exec NAME` for a server in a test
    /// network's namespace; empty for the shared one).
    public let launcher: [String]
    private let isPrivate: Bool
    private let databases = Locked<Set<String>>([])

    private static let started = Locked<Result<PostgresTestServer, Unavailable>?>(nil)

    /// The process's server, started on first use.
    public static func shared() throws(Unavailable) -> PostgresTestServer {
        try started.withLock { state -> Result<PostgresTestServer, Unavailable> in
            if let state { return state }
            let result = start()
            state = result
            return result
        }.get()
    }

    /// Whether the tests must fail (not skip) when no server can be started.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["AMBAR_REQUIRE_POSTGRES"] != nil }

    /// `scripts/postgres-server`, which runs psql against a server: `psql DIR arguments…`.
    public static var script: URL {
        Repository.url("scripts/postgres-server")
    }

    /// Every test server's default isolation is SERIALIZABLE, the strictest a database
    /// administrator may choose: the backend's code sets the level each of its transactions
    /// relies on, and a test that passes here passes on a server left at READ COMMITTED too.
    public static let defaultIsolation = "serializable"
    private static var isolation: [String] { ["--isolation", defaultIsolation] }

    private static func start() -> Result<PostgresTestServer, Unavailable> {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-pg-\(getpid())-\(UUID().uuidString.prefix(8))").path
        do {
            let run = try ProcessRunner.run(script, ["start", directory, "--watch", String(getpid())] + isolation, timeout: 300)
            guard run.status == 0, let url = URLComponents(string: run.output.trimmingCharacters(in: .whitespacesAndNewlines)), let port = url.port else {
                return .failure(Unavailable(description: "scripts/postgres-server could not start a server (exit \(run.status)): \(run.error.suffix(400))"))
            }
            return .success(PostgresTestServer(directory: directory, port: port, launcher: [], isPrivate: false))
        } catch {
            return .failure(Unavailable(description: "scripts/postgres-server could not run: \(error)"))
        }
    }

    /// A server of the caller's own, run under `launcher` (in a network namespace) and listening
    /// on `addresses`; stopped and removed when released (or when this process ends).
    /// (An empty launcher runs it here; port 0 picks a free one.)
    public static func startPrivate(launcher: [String] = [], listen addresses: String = "127.0.0.1", port: Int = 0) throws -> PostgresTestServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-pg-\(getpid())-\(UUID().uuidString.prefix(8))").path
        let arguments = ["start", directory] + (port > 0 ? [String(port)] : []) + ["--listen", addresses, "--watch", String(getpid())] + isolation
        let run =
            launcher.isEmpty
            ? try ProcessRunner.run(script, arguments, timeout: 300)
            : try ProcessRunner.run(URL(fileURLWithPath: launcher[0]), Array(launcher.dropFirst()) + [script.path] + arguments, timeout: 300)
        guard run.status == 0, let printed = URLComponents(string: run.output.trimmingCharacters(in: .whitespacesAndNewlines)), let chosen = printed.port else {
            throw Unavailable(description: "a private server could not start (exit \(run.status)): \(run.error.suffix(400))")
        }
        return PostgresTestServer(directory: directory, port: chosen, launcher: launcher, isPrivate: true)
    }

    private init(directory: String, port: Int, launcher: [String], isPrivate: Bool) {
        self.directory = directory
        self.port = port
        self.launcher = launcher
        self.isPrivate = isPrivate
    }

    deinit {
        if isPrivate { _ = try? ProcessRunner.run(Self.script, ["stop", directory], timeout: 60) }
    }

    /// The URL of database `name` through the server's Unix socket (from any namespace).
    public func socketURL(database name: String) throws -> URL {
        _ = try url(database: name)
        return URL(string: "postgres://postgres@localhost:\(port)/\(Self.databaseName(name))?host=\(directory)")!
    }

    /// Runs the script under the server's launcher.
    private func script(_ arguments: [String], timeout: TimeInterval) throws -> (status: Int32, output: String, error: String) {
        guard let program = launcher.first else { return try ProcessRunner.run(Self.script, arguments, timeout: timeout) }
        return try ProcessRunner.run(URL(fileURLWithPath: program), Array(launcher.dropFirst()) + [Self.script.path] + arguments, timeout: timeout)
    }

    /// The URL of database `name` (made on first use).
    public func url(database name: String) throws -> URL {
        let database = Self.databaseName(name)
        let created = try databases.withLock { known -> Bool in
            if known.contains(database) { return true }
            let result = try psql(["-d", "postgres", "-c", "CREATE DATABASE \"\(database)\""])
            guard result.status == 0 else { throw Unavailable(description: "CREATE DATABASE \(database) failed: \(result.error)") }
            known.insert(database)
            return true
        }
        precondition(created)
        return URL(string: "postgres://postgres@127.0.0.1:\(port)/\(database)?sslmode=disable")!
    }

    /// A store description for database `name`.
    public func store(_ name: String) throws -> StoreDescription {
        .postgres(try url(database: name))
    }

    /// Runs psql against the server (as the server's owner).
    @discardableResult
    public func psql(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try ProcessRunner.run(Self.script, ["psql", directory] + arguments, timeout: 60)
    }

    /// How many connections LISTEN for the store in `database` (the doorbell's connections are
    /// named `…-listen`), as the server counts them.
    public func listeners(database: String) throws -> Int {
        let result = try psql([
            "-d", "postgres", "-At", "-c",
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database)' AND application_name = 'ambar-listen'",
        ])
        return Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Polls ``listeners(database:)`` until it is `expected` or `timeout` passes; returns the last
    /// count (the caller asserts it).
    public func awaitListeners(database: String, _ expected: Int, timeout: TimeInterval = 30) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var last = -1
        while Date() < deadline {
            last = try listeners(database: database)
            if last == expected { return last }
            usleep(100_000)  // polling the server's view, bounded by the deadline
        }
        return last
    }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`).
    public func crash() throws {
        let result = try script(["crash", directory], timeout: 60)
        guard result.status == 0 else { throw Unavailable(description: "crash failed: \(result.error)") }
    }

    /// Starts the server again after ``crash()``.
    public func restart() throws {
        let result = try script(["restart", directory], timeout: 120)
        guard result.status == 0 else { throw Unavailable(description: "restart failed: \(result.error)") }
    }

    /// A PostgreSQL database name for `name` (at most 63 bytes, letters, digits and `_`).
    public static func databaseName(_ name: String) -> String {
        var cleaned = String(name.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }.prefix(40))
        cleaned += "_" + String(FNV1a(name.utf8).value, radix: 36)
        return cleaned
    }
}
