import AmbarCore
import Foundation

/// Backs up a database with `pg_dump`: one consistent snapshot (pg_dump reads the whole database
/// in one REPEATABLE READ transaction) in its custom format, checked by listing it with
/// `pg_restore --list`. The connection goes through libpq's environment variables, so the
/// password is never on a command line.
enum PostgresDump {
    static func dump(_ url: PostgresURL, to file: URL) throws(AmbarError) {
        let dump = try PostgresClientTools.tool("pg_dump", for: "backing up a PostgreSQL store")
        let restore = try PostgresClientTools.tool("pg_restore", for: "backing up a PostgreSQL store")
        let environment = PostgresClientTools.environment(for: url, purpose: "backup")
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw .storage(
                operation: "backup", code: 0, message: "cannot create \(file.deletingLastPathComponent().path): \(error.localizedDescription)",
                cause: ErrorCause(error))
        }
        let dumped = PostgresClientTools.run(dump, ["--format=custom", "--no-password", "--file=\(file.path)"], environment)
        if dumped.status != 0 {
            throw .serverUnavailable(
                server: url.description, operation: "backup (pg_dump)",
                reason: dumped.error.trimmingCharacters(in: .whitespacesAndNewlines) + removePartial(file))
        }
        let listed = PostgresClientTools.run(restore, ["--list", file.path], environment)
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
