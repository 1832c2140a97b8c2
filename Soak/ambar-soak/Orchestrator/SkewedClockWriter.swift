import Foundation
import ProcessHarness

/// A writer whose clock is a year ahead (`faketime -f +365d`), on and off through the run: every
/// few seconds either a `sync-agent import` of a few rows (its transaction stamped a year ahead)
/// or a `sync-agent watch` SIGKILLed after a moment (its merge position left behind, seen a year
/// ahead). Retention must go on all the same: the ledger's rows must level off.
final class SkewedClockWriter {
    static let skew = "+365d"

    private let root: URL
    private let keys: Int
    private let every: TimeInterval
    private let agentPath: String
    private var next: Date
    private var round = 0
    private var watcher: (process: SpawnedProcess, started: Date)?
    private(set) var imports = 0
    /// Imports refused because another SQLite client held the write lock (a clear error, no
    /// data written; the next round imports again).
    private(set) var refusedWhileLocked = 0
    private(set) var killedWatchers = 0
    private(set) var problems: [String] = []

    init(root: URL, keys: Int, every: TimeInterval, executableDirectory: URL) throws {
        self.root = root
        self.keys = keys
        self.every = every
        agentPath = try SyncAgentBinary.path(in: executableDirectory)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/faketime") else {
            throw SoakFailure("no /usr/bin/faketime: scripts/install-deps --tests installs it")
        }
        next = Date().addingTimeInterval(every / 2)
    }

    /// Called from the chaos loop.
    func tick() {
        if let current = watcher, Date().timeIntervalSince(current.started) >= 2 {
            killWatcher(current.process)
            watcher = nil
        }
        guard watcher == nil, Date() >= next else { return }
        next = Date().addingTimeInterval(every)
        round += 1
        let log = root.appendingPathComponent("logs/skewed-\(round).log")
        do {
            if round % 2 == 1 {
                let file = root.appendingPathComponent("skewed-\(round).ndjson")
                let lines = (0..<3).map { n in
                    #"{"key":\#(keys + 100 + n),"name":"skewed \#(round)","value":\#(round),"revision":\#(round),"writer":"skewed"}"#
                }
                try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
                let process = try SpawnedProcess(
                    "/usr/bin/faketime",
                    ["-f", Self.skew, agentPath, "import", "--directory", root.path, "--entity", SoakModel.entity, "--key", "key", file.path], log: log)
                let status = process.waitForExit(timeout: 120)
                if status == nil {
                    // Hung: faketime and the agent under it are killed, not left running past the soak.
                    killTree(process)
                    problems.append("a sync-agent import with its clock \(Self.skew) did not end within 120 s (killed); see logs/skewed-\(round).log")
                } else if let status, SpawnedProcess.exitCode(status) == 0 {
                    imports += 1
                } else if ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("database is locked") {
                    refusedWhileLocked += 1  // the inbox driver's other client held the write lock past the busy timeout
                } else if let status {
                    // What it said, in the report itself: CI keeps the report, not the run's directory.
                    let ended = SpawnedProcess.exitCode(status).map { "exit \($0)" } ?? "signal \(status & 0x7f)"
                    problems.append("a sync-agent import with its clock \(Self.skew) failed (\(ended)): \(Self.tail(of: log)); see logs/skewed-\(round).log")
                }
            } else {
                let process = try SpawnedProcess("/usr/bin/faketime", ["-f", Self.skew, agentPath, "watch", "--directory", root.path, "--no-hub"], log: log)
                watcher = (process, Date())
            }
        } catch {
            problems.append("could not run a writer with its clock \(Self.skew): \(error)")
        }
    }

    /// The last lines of `log` (at most three), on one line.
    static func tail(of log: URL) -> String {
        let lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(3)
        return lines.isEmpty ? "it printed nothing" : lines.joined(separator: " | ")
    }

    /// Ends the watcher still running (at the end of the soak).
    func stop() {
        if let current = watcher { killWatcher(current.process) }
        watcher = nil
    }

    /// SIGKILL to the watcher (faketime's child) and to faketime: it leaves its merge position,
    /// seen a year ahead, behind.
    private func killWatcher(_ process: SpawnedProcess) {
        killTree(process)
        killedWatchers += 1
    }

    /// SIGKILL to faketime's child (the agent) and to faketime, and waits for faketime to end.
    private func killTree(_ process: SpawnedProcess) {
        let children = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(process.processIdentifier)/children", encoding: .utf8)) ?? ""
        for child in children.split(separator: " ").compactMap({ pid_t($0) }) { kill(child, SIGKILL) }
        kill(process.processIdentifier, SIGKILL)
        _ = process.waitForExit(timeout: 10)
    }
}
