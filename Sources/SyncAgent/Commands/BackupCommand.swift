import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation

/// `sync-agent backup --to FILE`: an online backup while the agents keep writing.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract:
            "Copy the store to a new file while other processes keep writing (SQLite: checked with integrity_check; PostgreSQL: a pg_dump custom-format archive, checked with pg_restore --list)."
    )

    @OptionGroup var directory: DirectoryOptions

    @Option(name: .long, help: "The new file to write; an existing file is never overwritten.")
    var to: String

    @Flag(name: .long, help: "Print the result as JSON.")
    var json = false

    func run() throws {
        bootstrapLogging(level: .warning)
        let stack = try openExistingStack(directory)
        let target = URL(fileURLWithPath: to)
        let started = ContinuousClock.now
        try stack.mainCoordinator.backup(to: target)
        // try?: only the size printed: 0 when it cannot be read
        let size = ((try? FileManager.default.attributesOfItem(atPath: target.path)[.size]) as? NSNumber)?.intValue ?? 0
        let seconds = (ContinuousClock.now - started).inSeconds
        let format = directory.serverURL == nil ? "sqlite" : "pg_dump custom (restore with pg_restore)"
        if json {
            try JSONLine.print(["backup": target.path, "size": size, "seconds": seconds, "integrity": "ok", "format": format])
        } else {
            print("backup \(target.path): \(size) bytes in \(String(format: "%.2f", seconds)) s, integrity ok (\(format))")
        }
    }
}
