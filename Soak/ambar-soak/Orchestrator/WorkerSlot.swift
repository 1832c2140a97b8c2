import Foundation
import ProcessHarness

/// One life of a soak process: from its start to its kill, crash or orderly exit.
struct Incarnation {
    enum End: Equatable {
        case running
        /// SIGKILLed by the chaos loop.
        case killed
        /// Exited after the orchestrator's SIGTERM, with this wait status.
        case terminated(Int32)
        /// Ended on its own: a crash, or a failure to start.
        case crashed(Int32)
    }

    let slot: String
    let pid: pid_t
    let started: Int64
    var ended: Int64?
    var end = End.running
    let eventsPath: String
    /// (CLOCK_REALTIME ns, resident set size in bytes), about once a second.
    var memory: [(Int64, Int)] = []
}

/// A named soak process that the chaos loop kills, restarts, freezes and thaws. Used from the
/// orchestrator's thread only.
final class WorkerSlot {
    let name: String
    let role: WorkerRole
    /// The sentinel is never killed: it watches the whole run (and never serves the hub, so the
    /// hub stays killable).
    let isSentinel: Bool
    private let launch: (_ eventsPath: String) throws -> SpawnedProcess
    /// Whether the worker runs under `unshare --pid --fork` (in a PID namespace of its own): the
    /// spawned process is then `unshare`, and the worker its child.
    let inPIDNamespace: Bool
    private var process: SpawnedProcess?
    /// The worker's PID (as this process sees it) when it runs under `unshare`.
    private var childPID: pid_t?
    private(set) var incarnations: [Incarnation] = []
    /// Since when (ns) the current incarnation is stopped with SIGSTOP.
    private(set) var frozenSince: Int64?

    init(
        name: String, role: WorkerRole, isSentinel: Bool, inPIDNamespace: Bool = false,
        launch: @escaping (_ eventsPath: String) throws -> SpawnedProcess
    ) {
        self.name = name
        self.role = role
        self.isSentinel = isSentinel
        self.inPIDNamespace = inPIDNamespace
        self.launch = launch
    }

    /// The worker's PID as this process sees it (signals go there).
    var pid: pid_t? { process == nil ? nil : childPID ?? process?.processIdentifier }
    var current: Incarnation? { process == nil ? nil : incarnations.last }

    /// Starts a new incarnation.
    func start(eventsDirectory: URL) throws {
        let path = eventsDirectory.appendingPathComponent("\(name)-\(incarnations.count).log").path
        let process = try launch(path)
        self.process = process
        childPID = inPIDNamespace ? Self.child(of: process.processIdentifier) : nil
        incarnations.append(Incarnation(slot: name, pid: childPID ?? process.processIdentifier, started: EventLog.now(), eventsPath: path))
    }

    /// SIGKILL, and reap.
    func kill() {
        guard let process, let pid else { return }
        Glibc.kill(pid, SIGKILL)  // unshare --kill-child follows its child
        Glibc.kill(process.processIdentifier, SIGKILL)
        _ = process.waitForExit(timeout: 30)
        finish(.killed)
    }

    /// SIGSTOP.
    func freeze() {
        guard let pid, frozenSince == nil else { return }
        Glibc.kill(pid, SIGSTOP)
        frozenSince = EventLog.now()
    }

    /// SIGCONT; returns the frozen interval.
    @discardableResult
    func thaw() -> (Int64, Int64)? {
        guard let pid, let since = frozenSince else { return nil }
        Glibc.kill(pid, SIGCONT)
        frozenSince = nil
        return (since, EventLog.now())
    }

    /// When the process ended on its own: records it and returns its wait status.
    func reapIfEnded() -> Int32? {
        guard let process, !process.isRunning else { return nil }
        let status = process.waitForExit(timeout: 0) ?? -1
        finish(.crashed(status))
        return status
    }

    /// SIGTERM, then waits up to `timeout` seconds (SIGKILL after that); returns the wait status.
    func terminate(timeout: TimeInterval) -> Int32? {
        guard let process, let pid else { return nil }
        thaw()
        Glibc.kill(pid, SIGTERM)
        let status = process.waitForExit(timeout: timeout)
        if status == nil { self.kill() } else { finish(.terminated(status ?? -1)) }
        return status
    }

    /// Records the current incarnation's resident set size.
    func sampleMemory() {
        guard let pid, var last = incarnations.popLast() else { return }
        if let rss = Self.residentBytes(of: pid) { last.memory.append((EventLog.now(), rss)) }
        incarnations.append(last)
    }

    private func finish(_ end: Incarnation.End) {
        process = nil
        childPID = nil
        frozenSince = nil
        guard var last = incarnations.popLast() else { return }
        last.ended = EventLog.now()
        last.end = end
        incarnations.append(last)
    }

    /// The first child of `parent` (from /proc), waiting up to 5 s for it to appear.
    static func child(of parent: pid_t) -> pid_t? {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: "/proc/\(parent)/task/\(parent)/children", encoding: .utf8),
                let first = text.split(separator: " ").first, let child = pid_t(first)
            {
                return child
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return nil
    }

    /// VmRSS from /proc/<pid>/status.
    static func residentBytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }
}
