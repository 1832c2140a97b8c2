import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation

/// `sync-agent restore --from BACKUP`: replaces the store with a backup while the agents run.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace the store with a backup, safely while other processes use it (SQLite or PostgreSQL).",
        discussion: """
            The backup is checked first (integrity, an Ambar store, the same store unless \
            --allow-another-store, and the store's model opens it); nothing changes when a check \
            fails. Holding the store's write lock, the backup's copy then takes the store's place; \
            the replaced store is kept beside it as <store>.replaced-<UTC time>. Every process that \
            had the old file open stops trusting it: its next write fails, and sharing processes \
            (run, watch, serve, hub, your daemons) exit non-zero within a second, for systemd to \
            restart them on the restored store. The restored ledger continues after the replaced \
            one; every consumer's position is expired, so each reconciles once. restore waits up to \
            --wait seconds for the processes on the replaced store to let go, and names those that \
            still hold it.

            On PostgreSQL (--store postgres://…) the backup is the archive `sync-agent backup` \
            wrote; it is checked the same way (pg_restore reads it, an Ambar store, the same UUID). \
            The restore is one transaction that takes every table of the store (waiting up to 30 s \
            for a moment no other session uses them), replaces them with the archive's \
            (pg_restore --clean) and moves the ledger past the old head; consumers' positions, \
            leases and standbys, and the primary-key sequences, stay those of the running store. \
            Nothing changes when any of it fails. Processes keep running: each finds its position \
            expired and reconciles once. It runs pg_restore and psql (postgresql-client).
            """)

    @OptionGroup var directory: DirectoryOptions

    @Option(name: .long, help: "The backup to restore (a file `sync-agent backup` wrote).")
    var from: String

    @Flag(name: .long, help: "Restore a backup of another store (another UUID) over this one.")
    var allowAnotherStore = false

    @Option(
        name: .long, help: "How many seconds to wait for the processes on the replaced store to let go of it (SQLite: on PostgreSQL processes keep running).")
    var wait: Double = 10

    @Flag(name: .long, help: "Print the result as JSON.")
    var json = false

    func run() throws {
        bootstrapLogging(level: .warning)
        let model = try existingModel(directory)
        if let serverURL = directory.serverURL {
            let report = try PostgreSQLSupport.restore(serverURL, from: URL(fileURLWithPath: from), model: model, allowingAnotherStore: allowAnotherStore)
            if json {
                try JSONLine.print(report)
            } else {
                print(
                    "restored \(report["backup"] ?? "") into \(report["store"] ?? "") (store \(report["store_uuid"] ?? "")): the backup's ledger ended at token \(report["backup_head"] ?? ""), the replaced store's at \(report["replaced_head"] ?? ""); the restored ledger continues at \(report["marker_token"] ?? "")"
                )
            }
            return
        }
        let report = try DataStack.restoreStore(
            at: directory.storeFile, from: URL(fileURLWithPath: from), model: model, allowingAnotherStore: allowAnotherStore)
        let holders = ReplacedStoreHolders.waitForRelease(of: report.keptAside, seconds: wait)
        if json {
            try JSONLine.print([
                "store": report.store.path, "backup": report.backup.path, "kept_aside": report.keptAside.path, "store_uuid": report.storeUUID,
                "backup_head": report.backupHead, "replaced_head": report.replacedHead, "marker_token": report.markerToken,
                "still_open_by": holders.map(Int.init),
            ])
        } else {
            print(
                "restored \(report.backup.path) into \(report.store.path) (store \(report.storeUUID)): the backup's ledger ended at token \(report.backupHead), the replaced store's at \(report.replacedHead); the restored ledger continues at \(report.markerToken)"
            )
            print("the replaced store is kept at \(report.keptAside.path)")
            if holders.isEmpty {
                print("no process has the replaced store open")
            } else {
                print(
                    "still open after \(Int(wait)) s by pid \(holders.map(String.init).joined(separator: ", ")): those processes do not share the store (they stop trusting it at their next write); restart them"
                )
            }
        }
    }
}
