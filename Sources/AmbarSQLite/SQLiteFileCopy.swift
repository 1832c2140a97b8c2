import AmbarCore
import AmbarSQL
import Foundation
import GRDB

/// Whole SQLite store files, for relocation and restore: copied into a new file with SQLite's
/// backup API (one read snapshot, so writers elsewhere cannot make it inconsistent) and checked,
/// and told apart by their store UUID.
enum SQLiteFileCopy {
    /// Copies `source` into `destination` and returns the copy's `integrity_check` problems
    /// (empty when it is sound). `readOnly` opens the source read-only; read-write recovers a hot
    /// journal first.
    static func copy(_ source: URL, to destination: URL, readOnly: Bool) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.busyMode = .timeout(10)
        let from = try DatabaseQueue(path: source.path, configuration: configuration)
        let to = try DatabaseQueue(path: destination.path)
        try from.backup(to: to)
        let problems = try to.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        try to.close()
        try from.close()
        return problems == ["ok"] ? [] : problems
    }

    /// The `store_uuid` in the metadata of the database at `file`, read-only; nil when it is not
    /// an Ambar store.
    static func storeUUID(of file: URL) throws -> String? {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: file.path, configuration: configuration)
        defer { try? queue.close() }  // try?: cleanup of a read-only copy source; what was copied is checked on its own
        return try queue.read { db in
            guard try db.tableExists("ambar_metadata") else { return nil }
            return try String.fetchOne(db, sql: "SELECT value FROM ambar_metadata WHERE key = 'store_uuid'")
        }
    }
}
