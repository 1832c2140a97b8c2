/// What opening a damaged store file does (decision D10: never a silent delete).
public enum DamagedStoreRecovery: Sendable, Hashable {
    /// Throw ``AmbarError/storeDamaged(path:reason:)`` and leave the file as it is (the default).
    case fail
    /// Move the damaged files aside — `<name>.sqlite.corrupt-<timestamp>` with its `-wal` and
    /// `-shm` — log where they went, and open a new, empty store.
    case quarantine
}
