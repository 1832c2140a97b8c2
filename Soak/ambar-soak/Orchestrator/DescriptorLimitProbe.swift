import Foundation
import ProcessHarness

/// A process at its descriptor limit, over and over: every few seconds a `sync-agent watch` is
/// started on the soak's store under a low limit on open files (`prlimit --nofile`, from 8 to 80:
/// below 51, sync-agent refuses to start; above, it runs with the store's connections near the
/// limit).
/// Each one must either run — and stop cleanly on SIGTERM — or end with a clear "Too many open
/// files" error; never be killed by a signal (SIGILL from an event loop that got no descriptor),
/// and never disturb the others.
final class DescriptorLimitProbe {
    private let root: URL
    private let every: TimeInterval
    private let agentPath: String
    private var next: Date
    private var running: (process: SpawnedProcess, limit: Int, log: URL, started: Date)?
    private(set) var outcomes: [String: Int] = [:]
    private(set) var problems: [String] = []
    /// How many probes were started: each writes its own log, kept for what went wrong.
    private var started = 0

    /// The limits on open files the probes run under.
    static let limits = 8...80

    init(root: URL, every: TimeInterval, executableDirectory: URL) throws {
        self.root = root
        self.every = every
        agentPath = try SyncAgentBinary.path(in: executableDirectory)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit") else {
            throw SoakFailure("no /usr/bin/prlimit (util-linux): scripts/install-deps --tests installs it")
        }
        next = Date().addingTimeInterval(every / 3)
    }

    /// Called from the chaos loop: ends the probe that ran long enough, starts the next one.
    func tick() {
        if let current = running, Date().timeIntervalSince(current.started) >= 2 {
            finish(current)
            running = nil
        }
        guard running == nil, Date() >= next else { return }
        next = Date().addingTimeInterval(every)
        let limit = Int.random(in: Self.limits)
        let log = root.appendingPathComponent("logs/descriptor-probe-\(started)-limit-\(limit).log")
        started += 1
        do {
            // Through a wrapper that closes every inherited descriptor but 0-2, as from a shell,
            // and lets a crash leave a core file in the soak's directory (kept when it fails).
            let wrapper = """
                import os, resource, sys
                os.closerange(3, 65536)
                os.chdir(sys.argv[1])
                try:
                    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
                except (ValueError, OSError):
                    pass
                os.execv(sys.argv[2], sys.argv[2:])
                """
            let process = try SpawnedProcess(
                "/usr/bin/python3",
                [
                    "-c", wrapper, root.path, "/usr/bin/prlimit",
                    "--nofile=\(limit):\(limit)", agentPath, "watch", "--directory", root.path, "--no-hub",
                ], log: log)
            running = (process, limit, log, Date())
        } catch {
            problems.append("could not start a watch under \(limit) descriptors: \(error)")
        }
    }

    /// Ends the probe still running (at the end of the soak).
    func stop() {
        if let current = running { finish(current) }
        running = nil
    }

    private func finish(_ probe: (process: SpawnedProcess, limit: Int, log: URL, started: Date)) {
        let text = { (try? String(contentsOf: probe.log, encoding: .utf8)) ?? "" }
        if let status = probe.process.waitForExit(timeout: 0) {
            guard let code = SpawnedProcess.exitCode(status) else {
                problems.append("watch under \(probe.limit) descriptors was killed by signal \(status & 0x7f) (\(probe.log.path)): \(text().suffix(300))")
                return
            }
            if code == 0 {
                outcomes["finished", default: 0] += 1
            } else if text().contains("Too many open files") {
                outcomes["refused clearly", default: 0] += 1
            } else {
                problems.append("watch under \(probe.limit) descriptors exited \(code) without saying why clearly: \(text().suffix(300))")
            }
            return
        }
        kill(probe.process.processIdentifier, SIGTERM)
        guard let status = probe.process.waitForExit(timeout: 20) else {
            kill(probe.process.processIdentifier, SIGKILL)
            _ = probe.process.waitForExit(timeout: 10)
            problems.append("watch under \(probe.limit) descriptors ignored SIGTERM for 20 s")
            return
        }
        if SpawnedProcess.exitCode(status) == 0 {
            outcomes["ran and stopped", default: 0] += 1
        } else {
            problems.append("watch under \(probe.limit) descriptors, stopped by SIGTERM, ended with wait status \(status): \(text().suffix(300))")
        }
    }
}
