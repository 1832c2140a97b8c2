import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite
import Logging

// Opening a store: the pool and its connections, the schema, the check for damage, quarantine,
// and the errors an open can end in.

extension SQLiteStore {
    /// Opens (creating if needed) a store for `model`.
    ///
    /// - Throws: ``AmbarError/storeCannotOpen(path:reason:cause:)`` when the file cannot be opened or is
    ///   not an SQLite database, ``AmbarError/incompatibleModel(storeHash:modelHash:)`` when it was
    ///   created with another model.
    package static func open(_ location: Location, model: ManagedObjectModel, recovery: DamagedStoreRecovery = .fail, busyTimeout: TimeInterval = 10)
        throws(AmbarError)
        -> SQLiteStore
    {
        do {
            return try openOnce(location, model: model, busyTimeout: busyTimeout)
        } catch {
            guard case .storeDamaged(let path, let reason) = error, recovery == .quarantine, case .file(let url) = location else { throw error }
            let moved = try quarantine(url)
            logger.error(
                "the store was damaged and was moved aside; starting an empty store",
                metadata: [
                    "store": "\(path)", "reason": "\(reason)", "moved-to": "\(moved.path)",
                ])
            return try openOnce(location, model: model, busyTimeout: busyTimeout)
        }
    }

    /// Moves a damaged store and its -wal and -shm aside; returns the new path of the main file.
    static func quarantine(_ url: URL) throws(AmbarError) -> URL {
        let stamp = Date().formatted(.iso8601.year().month().day().dateSeparator(.omitted).time(includingFractionalSeconds: false).timeSeparator(.omitted))
        let target = URL(fileURLWithPath: "\(url.path).corrupt-\(stamp)")
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            guard rename(url.path + suffix, target.path + suffix) == 0 else {
                throw .storage(
                    operation: "quarantine a damaged store", code: errno, message: "cannot move \(url.path + suffix) aside: \(String(cString: strerror(errno)))"
                )
            }
        }
        return target
    }

    /// The size the write-ahead log is cut back to after a checkpoint restarts it: 4 MiB.
    static let walSizeLimit = 4 << 20

    /// Refuses a store path that names a directory: SQLite would only say "disk I/O error".
    static func refuseDirectory(_ url: URL) throws(AmbarError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else { return }
        throw .storeCannotOpen(
            path: url.path,
            reason:
                "it is a directory; give the store file itself, such as \(url.appendingPathComponent("ambar.sqlite").path) (the file sync-agent uses in a shared directory)"
        )
    }

    private static func openOnce(_ location: Location, model: ManagedObjectModel, busyTimeout: TimeInterval) throws(AmbarError) -> SQLiteStore {
        if case .file(let url) = location { try refuseDirectory(url) }
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "ambar"
        let isFile: Bool
        if case .file = location { isFile = true } else { isFile = false }
        configuration.prepareDatabase { db in
            SQLiteFunctions.register(on: db)
            if isFile && !db.configuration.readonly {
                // Keep -wal and -shm after close, so read-only processes can always open the store.
                var flag: CInt = 1
                let code = withUnsafeMutablePointer(to: &flag) { pointer in
                    sqlite3_file_control(db.sqliteConnection, nil, SQLITE_FCNTL_PERSIST_WAL, pointer)
                }
                guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                // A reader that holds an old snapshot (a process frozen or busy mid-read) keeps
                // checkpoints from restarting the WAL, which then grows with every write; once a
                // checkpoint restarts it, it is cut back to this size, so the files level off again.
                try db.execute(sql: "PRAGMA journal_size_limit = \(SQLiteStore.walSizeLimit)")
            }
        }
        let writer: any DatabaseWriter
        let description: String
        do {
            switch location {
            case .file(let url):
                description = url.path
                writer = try DatabasePool(path: url.path, configuration: configuration)
            case .inMemory:
                description = ":memory:"
                writer = try DatabaseQueue(configuration: configuration)
            }
        } catch {
            let path: String
            if case .file(let url) = location { path = url.path } else { path = ":memory:" }
            throw Self.openError(error, path: path)
        }
        let prepared: (uuid: String, entityIDs: [String: Int64])
        do {
            // A store already prepared for this model is opened with a read; only a new store, a
            // migration or a missing piece takes the write lock (and waits for it).
            if let current = try writer.read({ db in try SQLiteSchema.alreadyPrepared(db, model: model) }) {
                prepared = current
            } else {
                prepared = try writer.writeWithoutTransaction { db in
                    try SQLiteStore.immediateTransaction(db, path: description, operation: "opening the store") {
                        try SQLiteSchema.prepare(db, model: model)
                    }
                }
            }
        } catch let error as AmbarError {
            try? writer.close()  // try?: cleanup on a failed open; the error that is thrown says what failed
            throw error
        } catch {
            try? writer.close()  // try?: cleanup on a failed open; the error that is thrown says what failed
            throw Self.openError(error, path: description)
        }
        if isFile {
            // A damaged page would otherwise surface later, in the middle of some save.
            // A check that cannot run (I/O error, lock) is not evidence of damage: reported as a
            // failure to open, so recovery never moves a sound store aside.
            let problems: [String]
            do {
                problems = try writer.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            } catch {
                try? writer.close()  // try?: cleanup on a failed open; the error that is thrown says what failed
                throw Self.openError(error, path: description)
            }
            if problems != ["ok"] {
                try? writer.close()  // try?: cleanup on a failed open; the error that is thrown says what failed
                throw .storeDamaged(path: description, reason: "integrity check: " + problems.prefix(3).joined(separator: "; "))
            }
        }
        return try SQLiteStore(writer: writer, location: description, model: model, uuid: prepared.uuid, entityIDs: prepared.entityIDs)
    }

    /// Reads the model kept in an existing store's metadata.
    package static func storedModel(at url: URL) throws(AmbarError) -> ManagedObjectModel {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw .storeCannotOpen(path: url.path, reason: "no such file")
        }
        try refuseDirectory(url)
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        do {
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            guard
                let json = try queue.read({ db in
                    try String.fetchOne(db, sql: "SELECT value FROM ambar_metadata WHERE key = 'model'")
                })
            else {
                throw AmbarError.storeCannotOpen(path: url.path, reason: "it has no model in ambar_metadata (not an Ambar store?)")
            }
            return try JSONDecoder().decode(ManagedObjectModel.self, from: Data(json.utf8))
        } catch let error as AmbarError {
            throw error
        } catch {
            throw Self.openError(error, path: url.path)
        }
    }

    /// A damaged file (not a database, or corrupt) as ``AmbarError/storeDamaged(path:reason:)``; a
    /// file on a read-only file system as ``AmbarError/storeReadOnly(path:reason:)``; a process out
    /// of descriptors as ``AmbarError/tooManyOpenFiles(operation:limit:)``; anything
    /// else as ``AmbarError/storeCannotOpen(path:reason:cause:)``.
    private static func openError(_ error: any Error, path: String) -> AmbarError {
        if let db = error as? DatabaseError, db.resultCode == .SQLITE_NOTADB || db.resultCode == .SQLITE_CORRUPT {
            return .storeDamaged(path: path, reason: reason(error))
        }
        if let db = error as? DatabaseError, db.resultCode == .SQLITE_CANTOPEN, DescriptorBudget.isShort(of: 8) {
            // A connection needs a few descriptors (the file, its WAL, its shared memory): a process
            // that cannot open eight more is out of them, whatever SQLite's message says.
            return .tooManyOpenFiles(operation: "opening the store at \(path)", limit: DescriptorBudget.limit)
        }
        if access(path, W_OK) != 0 && errno == EROFS {
            return .storeReadOnly(path: path, reason: "its file system is mounted read-only (\(reason(error)))")
        }
        return .storeCannotOpen(path: path, reason: reason(error))
    }

    private static func reason(_ error: any Error) -> String {
        if let db = error as? DatabaseError {
            if db.resultCode == .SQLITE_NOTADB { return "the file is not an SQLite database (it may be damaged)" }
            return db.message ?? "\(db)"
        }
        return "\(error)"
    }
}
