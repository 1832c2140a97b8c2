import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import Logging

/// Moves an SQLite store file to a new place (Ambar's `migratingFrom:to:`, done right — D9):
/// crash-safe, with its `-wal`/`-shm` sidecars handled, and never while another process uses it.
///
/// The steps: refuse when another process (or this one) has the old store open; copy it with
/// SQLite's backup API into a temporary file beside the new path; check the copy; rename it into
/// place; then delete the old file and its sidecars. A crash before the rename leaves the old
/// store as it was; a crash after it leaves both, holding the same store, and the next run
/// finishes by deleting the old one. Two *different* stores at the two paths are an error: neither
/// is deleted.
package enum SQLiteStoreRelocation {
    static let logger = Logger(label: "ambar.store")

    /// The sidecar suffixes SQLite may leave beside a store file.
    static let sidecars = ["-wal", "-shm", "-journal"]

    /// What relocation did.
    package enum Outcome: Equatable {
        /// No store at the old path: nothing to move.
        case nothingToMove
        /// The store was copied to the new path and the old files deleted.
        case moved
        /// An earlier relocation had copied the store but not deleted the old files; now deleted.
        case finishedEarlierMove
    }

    /// Moves the store at `old` to `new` (both file paths). Call before anything opens either.
    package static func relocate(from old: URL, to new: URL) throws(AmbarError) -> Outcome {
        let old = old.standardizedFileURL
        let new = new.standardizedFileURL
        guard old.path != new.path else { return .nothingToMove }
        let fileManager = FileManager.default
        guard fileManager.fileExists(atPath: old.path) else { return .nothingToMove }
        try checkNobodyHasOpen(old)

        if fileManager.fileExists(atPath: new.path) {
            let (oldUUID, newUUID) = (try storeUUID(old), try storeUUID(new))
            guard let oldUUID, oldUUID == newUUID else {
                throw .storeCannotOpen(
                    path: new.path,
                    reason:
                        "relocating from \(old.path): both paths hold a store, and they are different stores (UUIDs \(oldUUID ?? "none") and \(newUUID ?? "none")). Neither was touched; move one of them away"
                )
            }
            try checkNobodyHasOpen(new)
            try removeStoreFiles(old)
            logger.notice("finished an earlier relocation: removed the old copy", metadata: ["from": "\(old.path)", "to": "\(new.path)"])
            return .finishedEarlierMove
        }

        // Sidecars at the new path without a store file belong to no store: a stale WAL would be
        // replayed into the copy and corrupt it, so one that cannot be removed stops the move.
        try removeStoreFiles(new)
        let temporary = new.deletingLastPathComponent().appendingPathComponent(".\(new.lastPathComponent).relocating-\(getpid())")
        try removeStoreFiles(temporary)
        do {
            try fileManager.createDirectory(at: new.deletingLastPathComponent(), withIntermediateDirectories: true)
            let problems = try SQLiteFileCopy.copy(old, to: temporary, readOnly: false)  // read-write: a hot journal is recovered first
            guard problems.isEmpty else {
                throw AmbarError.storeDamaged(path: old.path, reason: "the copy failed its integrity check: \(problems.prefix(3).joined(separator: "; "))")
            }
        } catch {
            // try?: cleanup; the relocation's own error is thrown below
            try? removeStoreFiles(temporary)
            if let ambar = error as? AmbarError { throw ambar }
            throw .storeCannotOpen(path: new.path, reason: "relocating from \(old.path) failed, the old store is untouched: \(error)", cause: ErrorCause(error))
        }
        chmod(temporary.path, 0o660)
        guard rename(temporary.path, new.path) == 0 else {
            let reason = String(cString: strerror(errno))
            // try?: cleanup; the relocation's own error is thrown below
            try? removeStoreFiles(temporary)
            throw .storeCannotOpen(path: new.path, reason: "cannot move the copy into place (\(reason)); the old store at \(old.path) is untouched")
        }
        syncDirectory(new.deletingLastPathComponent())
        try removeStoreFiles(old)
        syncDirectory(old.deletingLastPathComponent())
        logger.notice("relocated the store", metadata: ["from": "\(old.path)", "to": "\(new.path)"])
        return .moved
    }

    /// Throws when a process holds the store open. Another process is found through the lock
    /// every SQLite connection in WAL mode holds on the `-shm` file's "dead man switch" byte
    /// (128); this process, through `/proc/self/fd` (its own locks do not show up, and probing
    /// would risk them: closing any descriptor of a file drops the process's locks on it).
    static func checkNobodyHasOpen(_ store: URL) throws(AmbarError) {
        let paths = Set([store.path] + sidecars.map { store.path + $0 })
        // try?: without /proc there is nothing to look at: the check cannot see, as on a system without it
        if let links = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            for link in links {
                // try?: a descriptor closed meanwhile names no file
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(link)") else { continue }
                if paths.contains(target) {
                    throw .storeCannotOpen(path: store.path, reason: "this process has the store open; close its stacks and coordinators before relocating it")
                }
            }
        }
        let fd = open(store.path + "-shm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }  // no shared memory file: no connection in WAL mode
        defer { close(fd) }
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 128
        probe.l_len = 1
        if fcntl(fd, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK) {
            throw .storeCannotOpen(
                path: store.path,
                reason: "process \(probe.l_pid) has the store open; stop it before relocating the store (moving it now would lose that process's writes)")
        }
    }

    /// The `store_uuid` in a store's metadata; `nil` when the file is not an Ambar store.
    private static func storeUUID(_ file: URL) throws(AmbarError) -> String? {
        do {
            return try SQLiteFileCopy.storeUUID(of: file)
        } catch {
            throw .storeCannotOpen(path: file.path, reason: "cannot read it to compare stores before relocating: \(error)", cause: ErrorCause(error))
        }
    }

    /// Deletes a store file and its sidecars (those that exist); a file that stays is an error.
    private static func removeStoreFiles(_ file: URL) throws(AmbarError) {
        for suffix in [""] + sidecars where FileManager.default.fileExists(atPath: file.path + suffix) {
            guard unlink(file.path + suffix) == 0 else {
                throw .storeCannotOpen(
                    path: file.path + suffix, reason: "relocating the store needs it gone, and it cannot be deleted: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Makes a rename or unlink in `directory` durable.
    private static func syncDirectory(_ directory: URL) {
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
