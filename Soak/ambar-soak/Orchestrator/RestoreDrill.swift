import AmbarStack
import Foundation
import ProcessHarness

/// An operator's restore at the end of the month: a backup taken in the middle of the chaos
/// (`sync-agent backup`, online, under load), then — once the run's own checks are done —
/// `sync-agent restore` of it while two `sync-agent watch` processes share the store. Both must
/// stop (exit non-zero) and let go of the replaced file, and the store at the path must be the
/// backup exactly: integrity ok, the same rows.
final class RestoreDrill {
    private let root: URL
    private let agentPath: String
    private(set) var backup: URL?
    private(set) var backupRows: Int?
    private(set) var problems: [String] = []
    /// What the drill found, for the summary.
    private(set) var outcome: String?

    init(root: URL, executableDirectory: URL) throws {
        self.root = root
        agentPath = try SyncAgentBinary.path(in: executableDirectory)
    }

    /// Takes the backup (called once, in the middle of the chaos).
    func takeBackup() {
        let target = root.appendingPathComponent("backup-mid.sqlite")
        let log = root.appendingPathComponent("logs/backup.log")
        guard let status = run(["backup", "--directory", root.path, "--to", target.path], log: log, timeout: 120), status == 0 else {
            problems.append("sync-agent backup in the middle of the run failed; see logs/backup.log")
            return
        }
        do {
            backupRows = try Self.rows(in: target)
            backup = target
        } catch {
            problems.append("the mid-run backup cannot be read: \(error)")
        }
    }

    /// Restores the backup under two watchers (after the run's checks, with every soak process
    /// stopped).
    func restoreUnderWatchers() {
        guard let backup, let backupRows else { return }
        var watchers: [SpawnedProcess] = []
        for n in 0..<2 {
            do {
                watchers.append(
                    try SpawnedProcess(agentPath, ["watch", "--directory", root.path], log: root.appendingPathComponent("logs/restore-watch-\(n).log")))
            } catch {
                problems.append("could not start a watcher for the restore: \(error)")
            }
        }
        defer {
            for watcher in watchers where watcher.isRunning {
                kill(watcher.processIdentifier, SIGKILL)
                _ = watcher.waitForExit(timeout: 10)
            }
        }
        // Both sharing: each has the store open (seen in /proc), then the restore.
        let store = SoakModel.storeURL(in: root).path
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && !watchers.allSatisfy({ Self.hasOpen($0.processIdentifier, store) }) { Thread.sleep(forTimeInterval: 0.05) }
        let log = root.appendingPathComponent("logs/restore.log")
        guard let status = run(["restore", "--directory", root.path, "--from", backup.path, "--json", "--wait", "5"], log: log, timeout: 120), status == 0
        else {
            problems.append("sync-agent restore failed; see logs/restore.log")
            return
        }
        // Every process but this one (whose checks opened the store) let go of the replaced file.
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let report = text.split(separator: "\n").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let holders = ((report?["still_open_by"] as? [Int]) ?? [-1]).filter { $0 != Int(getpid()) }
        if !holders.isEmpty { problems.append("after the restore, processes still held the replaced store: \(holders) (\(text.suffix(300)))") }
        var stopped: [String] = []
        for (n, watcher) in watchers.enumerated() {
            guard let status = watcher.waitForExit(timeout: 15) else {
                problems.append("watcher \(n) still ran 15 s after the restore")
                continue
            }
            let code = SpawnedProcess.exitCode(status)
            if code == nil || code == 0 { problems.append("watcher \(n) ended with wait status \(status) after the restore, not a non-zero exit") }
            stopped.append("exit \(code.map(String.init) ?? "signal")")
        }
        do {
            let coordinator = try PersistentStoreCoordinator(model: try SoakModel.model(), store: .sqlite(SoakModel.storeURL(in: root)))
            let integrity = try coordinator.integrityCheck()
            if !integrity.isEmpty { problems.append("integrity_check after the restore: \(integrity.prefix(3).joined(separator: "; "))") }
            let rows = try Self.rows(in: SoakModel.storeURL(in: root))
            if rows != backupRows { problems.append("the restored store holds \(rows) items, the backup \(backupRows)") }
            outcome =
                "a backup taken mid-run (\(backupRows) items) restored under 2 watchers: they stopped (\(stopped.joined(separator: ", "))), none held the replaced file, integrity \(integrity.isEmpty ? "ok" : "FAILED"), \(rows) items"
        } catch {
            problems.append("the restored store cannot be checked: \(error)")
        }
    }

    /// Runs `sync-agent` to the end; its wait status, nil after `timeout`.
    private func run(_ arguments: [String], log: URL, timeout: TimeInterval) -> Int32? {
        guard let process = try? SpawnedProcess(agentPath, arguments, log: log) else { return nil }
        return process.waitForExit(timeout: timeout)
    }

    private static func rows(in file: URL) throws -> Int {
        let coordinator = try PersistentStoreCoordinator(model: try SoakModel.model(), store: .sqlite(file))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "soak.restore")
        return try context.performAndWait { () throws(AmbarError) in try context.count(for: SoakModel.allItems()) }
    }

    /// Whether process `pid` has `path` open.
    private static func hasOpen(_ pid: pid_t, _ path: String) -> Bool {
        guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return false }
        return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) == path }
    }
}
