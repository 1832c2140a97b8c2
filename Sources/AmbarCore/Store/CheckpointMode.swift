import Foundation

/// How much a checkpoint does (see SQLite's `wal_checkpoint`).
package enum CheckpointMode: Sendable {
    /// Copies what it can without waiting for readers or writers.
    case passive
    /// Waits for readers, copies everything, and truncates the WAL file to zero bytes.
    case truncate
}
