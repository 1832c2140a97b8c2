import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation

/// `sync-agent restore --from BACKUP`: replaces the store with a backup while the agents run.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace the store with a backup, safely while other processes use it (SQLite).",
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
            still hold it. For a store on PostgreSQL, restore with pg_restore instead.
            """)

    @OptionGroup var directory: DirectoryOptions

    @Option(name: .long, help: "The backup to restore (a file `sync-agent backup` wrote).")
    var from: String

    @Flag(name: .long, help: "Restore a backup of another store (another UUID) over this one.")
    var allowAnotherStore = false

    @Option(name: .long, help: "How many seconds to wait for the processes on the replaced store to let go of it.")
    var wait: Double = 10

    @Flag(name: .long, help: "Print the result as JSON.")
    var json = false

    func run() throws {
        bootstrapLogging(level: .warning)
        guard directory.serverURL == nil else {
            throw ValidationError(
                "restore replaces an SQLite store file; for a store on PostgreSQL, restore the pg_dump archive with pg_restore (see the deployment guide)")
        }
        let model = try existingModel(directory)
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
