import AmbarCore
import Foundation

/// Backs up a database with `pg_dump`: one consistent snapshot (pg_dump reads the whole database
/// in one REPEATABLE READ transaction) in its custom format, checked by listing it with
/// `pg_restore --list`. The connection goes through libpq's environment variables, so the
/// password is never on a command line.
enum PostgresDump {
    static func dump(_ url: PostgresURL, to file: URL) throws(AmbarError) {
        let dump = try tool("pg_dump")
        let restore = try tool("pg_restore")
        var environment = ProcessInfo.processInfo.environment
        environment["PGHOST"] = url.socketDirectory ?? url.host
        environment["PGPORT"] = String(url.port)
        environment["PGUSER"] = url.user
        environment["PGDATABASE"] = url.database
        environment["PGSSLMODE"] = url.tls.rawValue
        environment["PGCONNECT_TIMEOUT"] = String(Int(url.connectTimeout.rounded(.up)))
        environment["PGAPPNAME"] = (url.applicationName ?? "ambar") + "-backup"
        if let root = url.rootCertificatePath { environment["PGSSLROOTCERT"] = root }
        if let password = url.password { environment["PGPASSWORD"] = password }
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw .storage(
                operation: "backup", code: 0, message: "cannot create \(file.deletingLastPathComponent().path): \(error.localizedDescription)",
                cause: ErrorCause(error))
        }
        let dumped = run(dump, ["--format=custom", "--no-password", "--file=\(file.path)"], environment)
        if dumped.status != 0 {
            throw .serverUnavailable(
                server: url.description, operation: "backup (pg_dump)",
                reason: dumped.error.trimmingCharacters(in: .whitespacesAndNewlines) + removePartial(file))
        }
        let listed = run(restore, ["--list", file.path], environment)
        if listed.status != 0 || !listed.output.contains("ambar_transactions") {
            throw .storage(
                operation: "backup", code: 0,
                message: "the dump written by pg_dump cannot be read back (pg_restore --list: \(listed.error.trimmingCharacters(in: .whitespacesAndNewlines)))"
                    + removePartial(file))
        }
    }

    /// Removes a partial archive; what to add to the error when it cannot be removed.
    private static func removePartial(_ file: URL) -> String {
        guard FileManager.default.fileExists(atPath: file.path) else { return "" }
        do {
            try FileManager.default.removeItem(at: file)
            return ""
        } catch {
            return "; the partial file \(file.path) could not be removed (\(error.localizedDescription)): delete it before trying again"
        }
    }

    /// A PostgreSQL client tool: on the PATH, else in Debian's versioned directories (newest
    /// first; a dump needs a pg_dump at least as new as the server).
    static func tool(_ name: String) throws(AmbarError) -> URL {
        var candidates: [String] = []
        // try?: no versioned directories: the PATH is searched, and a tool found nowhere is an error below
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted(by: >)
        candidates += versions.map { "/usr/lib/postgresql/\($0)/bin/\(name)" }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            candidates.append("\(directory)/\(name)")
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw .invalidArgument("backing up a PostgreSQL store needs \(name) (Debian: apt-get install postgresql-client)")
        }
        return URL(fileURLWithPath: found)
    }

    private static func run(_ tool: URL, _ arguments: [String], _ environment: [String: String]) -> (status: Int32, output: String, error: String) {
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

extension PostgresConnector {
    func dump(to file: URL) throws(AmbarError) {
        try PostgresDump.dump(url, to: file)
    }
}

extension UnreadableURLConnector {
    func dump(to file: URL) throws(AmbarError) {
        throw .serverUnavailable(server: displayLocation, operation: "backup", reason: problem)
    }
}
