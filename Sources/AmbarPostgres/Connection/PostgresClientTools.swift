import AmbarCore
import Foundation

/// PostgreSQL's own client tools (`pg_dump`, `pg_restore`, `psql`), run for backups and
/// restores. The connection goes through libpq's environment variables, so the password is never
/// on a command line.
enum PostgresClientTools {
    /// A tool: on the PATH, else in Debian's versioned directories (newest first; a dump needs a
    /// pg_dump at least as new as the server).
    ///
    /// - Throws: ``AmbarError/invalidArgument(_:)`` naming the Debian package when it is nowhere.
    static func tool(_ name: String, for purpose: String) throws(AmbarError) -> URL {
        var candidates: [String] = []
        // try?: no versioned directories: the PATH is searched, and a tool found nowhere is an error below
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted(by: >)
        candidates += versions.map { "/usr/lib/postgresql/\($0)/bin/\(name)" }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            candidates.append("\(directory)/\(name)")
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw .invalidArgument("\(purpose) needs \(name) (Debian: apt-get install postgresql-client)")
        }
        return URL(fileURLWithPath: found)
    }

    /// libpq's environment for the database `url` names; `purpose` ends the application name the
    /// server shows (`ambar-backup`).
    static func environment(for url: PostgresURL, purpose: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PGHOST"] = url.socketDirectory ?? url.host
        environment["PGPORT"] = String(url.port)
        environment["PGUSER"] = url.user
        environment["PGDATABASE"] = url.database
        environment["PGSSLMODE"] = url.tls.rawValue
        environment["PGCONNECT_TIMEOUT"] = String(Int(url.connectTimeout.rounded(.up)))
        environment["PGAPPNAME"] = (url.applicationName ?? "ambar") + "-" + purpose
        if let root = url.rootCertificatePath { environment["PGSSLROOTCERT"] = root }
        if let password = url.password { environment["PGPASSWORD"] = password }
        return environment
    }

    /// Runs `tool` to its end; its exit status (127 when it cannot start), standard output and
    /// standard error.
    static func run(_ tool: URL, _ arguments: [String], _ environment: [String: String]) -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        do { try process.run() } catch { return (127, "", "cannot run \(tool.path): \(error)") }
        let group = DispatchGroup()
        let collected = CollectedOutput()
        for (pipe, isError) in [(output, false), (error, true)] {
            group.enter()
            DispatchQueue.global().async {
                collected.set(isError, pipe.fileHandleForReading.readDataToEndOfFile())
                group.leave()
            }
        }
        process.waitUntilExit()
        group.wait()
        return (process.terminationStatus, collected.text(false), collected.text(true))
    }
}

/// Standard output and error of a tool, read on two threads.
private final class CollectedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var output = Data(), error = Data()

    func set(_ isError: Bool, _ data: Data) {
        lock.lock()
        defer { lock.unlock() }
        if isError { error = data } else { output = data }
    }

    func text(_ isError: Bool) -> String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: isError ? error : output, as: UTF8.self)
    }
}
