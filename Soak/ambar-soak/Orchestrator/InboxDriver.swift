import Foundation
import GRDBSQLite
import ProcessHarness

/// A `sync-agent run` agent on the soak's store, fed a file every few seconds; every other file is
/// dropped while another SQLite client holds the write lock longer than the agent's busy timeout.
/// Every file must end in `processed/`, none in `failed/`: a busy store is not bad data.
///
/// The files upsert a small fixed set of keys past the soak's key space, so the store stays the
/// same size.
final class InboxDriver {
    private let root: URL
    private let keys: Int
    private let every: TimeInterval
    private let lockFor: TimeInterval
    private var agent: SpawnedProcess?
    private var nextDrop: Date
    private(set) var dropped: [String] = []
    private(set) var lockHolds = 0
    /// When the write lock was held (CLOCK_REALTIME ns), for the latency figures.
    private(set) var lockIntervals: [(from: Int64, to: Int64)] = []
    /// Until when the write lock is held (no drop until then).
    private var holdingUntil = Date.distantPast

    static let name = "soak"

    /// The retention arguments the agent gets: it may serve the hub, and then it purges.
    private let retentionArguments: [String]

    init(root: URL, keys: Int, every: TimeInterval, lockFor: TimeInterval, retentionArguments: [String]) {
        self.retentionArguments = retentionArguments
        self.root = root
        self.keys = keys
        self.every = every
        self.lockFor = lockFor
        nextDrop = Date().addingTimeInterval(every / 2)
    }

    private var inbox: URL { root.appendingPathComponent("inbox/\(Self.name)") }

    /// Starts the agent (`sync-agent` beside this executable).
    func start(executableDirectory: URL) throws {
        let agentPath = try SyncAgentBinary.path(in: executableDirectory)
        agent = try SpawnedProcess(
            agentPath,
            [
                "run", "--name", Self.name, "--entity", SoakModel.entity, "--key", "key", "--directory", root.path,
                "--poll-interval", "100",
                // Not the hub: the chaos kills and freezes the hub's process, and this one is spared.
                "--no-hub",
            ] + retentionArguments, log: root.appendingPathComponent("logs/inbox-agent.log"))
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: inbox.path) {
            guard Date() < deadline else { throw SoakFailure("the sync-agent run agent made no inbox in 30 s; see logs/inbox-agent.log") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Called from the chaos loop: drops the next file when due.
    func tick() {
        guard Date() >= nextDrop, Date() >= holdingUntil else { return }
        nextDrop = Date().addingTimeInterval(every)
        let index = dropped.count
        if index % 2 == 1 { holdWriteLock() }
        let lines = (0..<20).map { n in
            #"{"key":\#(keys + n),"name":"inbox \#(index)","value":\#(index),"revision":\#(index),"writer":"inbox"}"#
        }
        let name = String(format: "drop-%05d.ndjson", index)
        let staging = root.appendingPathComponent("inbox/.\(name)")
        do {
            try lines.joined(separator: "\n").write(to: staging, atomically: false, encoding: .utf8)
            guard rename(staging.path, inbox.appendingPathComponent(name).path) == 0 else {
                FileHandle.standardError.write(Data("could not drop \(name): rename failed (errno \(errno))\n".utf8))
                return
            }
            dropped.append(name)
        } catch {
            FileHandle.standardError.write(Data("could not drop \(name): \(error)\n".utf8))
        }
    }

    /// Takes SQLite's write lock from a plain connection on another thread and holds it.
    private func holdWriteLock() {
        lockHolds += 1
        holdingUntil = Date().addingTimeInterval(lockFor + 1)
        let from = EventLog.now()
        lockIntervals.append((from, from + Int64((lockFor + 1) * 1e9)))
        let path = SoakModel.storeURL(in: root).path
        let seconds = lockFor
        let taken = DispatchSemaphore(value: 0)
        let thread = Thread {
            var db: OpaquePointer?
            defer { sqlite3_close_v2(db) }
            guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else {
                taken.signal()
                return
            }
            sqlite3_busy_timeout(db, 30_000)
            let ok = sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK
            taken.signal()
            guard ok else { return }
            Thread.sleep(forTimeInterval: seconds)
            sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
        }
        thread.start()
        taken.wait()
    }

    /// Waits (at most `timeout` seconds) until every dropped file left the inbox, then stops the
    /// agent. Returns the files that went to `failed/` and those still waiting.
    func finish(timeout: TimeInterval) -> (failed: [String], waiting: [String], processed: Int) {
        let deadline = Date().addingTimeInterval(timeout)
        func names(_ folder: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)) ?? []).filter { !$0.hasPrefix(".") }
        }
        while !names("inbox/\(Self.name)").isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        if let agent {
            kill(agent.processIdentifier, SIGTERM)
            if agent.waitForExit(timeout: 20) == nil {
                kill(agent.processIdentifier, SIGKILL)
                _ = agent.waitForExit(timeout: 10)
            }
        }
        agent = nil
        let failed = names("failed/\(Self.name)").filter { !$0.hasSuffix(".error.txt") }
        return (failed, names("inbox/\(Self.name)"), names("processed/\(Self.name)").count)
    }
}
