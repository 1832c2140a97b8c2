import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite
import Logging

// Checkpoints, online backups and the integrity check.

extension SQLiteStore {
    package func checkpoint(_ mode: CheckpointMode) throws(AmbarError) {
        do {
            try writer.writeWithoutTransaction { db in
                _ = try db.checkpoint(mode == .passive ? .passive : .truncate)
            }
        } catch {
            throw SQLiteValues.wrap(error, "checkpoint")
        }
    }

    package func backup(to url: URL) throws(AmbarError) {
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            let destination = try DatabaseQueue(path: url.path)
            // All pages in one step: one read snapshot, so concurrent writers cannot make the copy
            // inconsistent (they carry on; the copy is as of the moment the step began).
            try writer.backup(to: destination)
            let problems = try destination.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            try destination.close()
            guard problems == ["ok"] else {
                throw AmbarError.storage(
                    operation: "backup", code: SQLITE_CORRUPT, message: "the copy failed its integrity check: \(problems.prefix(3).joined(separator: "; "))")
            }
            chmod(url.path, 0o660)
        } catch {
            // try?: cleanup of a failed backup; some of these files never existed, and the error that is thrown says what failed
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
            if let ambar = error as? AmbarError { throw ambar }
            throw SQLiteValues.wrap(error, "backup")
        }
    }

    package func integrityCheck() throws(AmbarError) -> [String] {
        let lines = try read("integrity check") { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        return lines == ["ok"] ? [] : lines
    }
}
