import AmbarStack
import ArgumentParser
import Foundation
import ProcessHarness

/// `ambar-soak run` (the default): the chaos soak.
struct ChaosRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the soak and print its summary; exits 1 unless every check passed.",
        discussion: """
            Starts --processes soak processes on one store (a watcher that lives through the whole \
            run and never serves the hub, then importers, updaters, deleters and watchers in turn). \
            Every --kill-every seconds one is SIGKILLed and restarted (every third kill takes the \
            hub's process); every --freeze-every seconds one is SIGSTOPped for --freeze-for \
            seconds. At the end the load stops and every process, and a fresh reader, must agree \
            on a digest of every row; every process life must have merged each other process's \
            transaction exactly once; integrity_check must be ok; long lives' memory must level off.

            --month is an accelerated month of a deployment: retention of 3 s (purges and cursor \
            removal all the time; the ledger's rows and the store's size must level off), a hostile \
            peer sending forged and replayed hub messages, the hub's process frozen for 6 s (past \
            every handshake deadline) every 25 s, every other worker in a PID namespace of its own \
            where the machine allows it, and a sync-agent run agent fed a file every 10 s, every \
            other one while another SQLite client holds the write lock for 11 s (no file may end in \
            failed/), a writer whose clock is a year ahead (faketime: imports, and watchers SIGKILLed \
            that leave their positions behind; purging must go on), and every \
            8 s a sync-agent watch under a low limit on open files (it runs, or ends with a clear \
            error; never a crash), and a backup taken in the middle that sync-agent restore puts back \
            after the checks, under two watchers (they must stop, the store must be the backup). \
            Observers must never report a transaction the ledger does not hold.
            """)

    @Option(help: "How long the load and the chaos last, in seconds.") var seconds = 60
    @Option(help: "How many soak processes.") var processes = 6
    @Option(help: "Seconds between two kills.") var killEvery = 4.0
    @Option(help: "Seconds between two freezes.") var freezeEvery = 15.0
    @Option(help: "How long a freeze lasts, in seconds.") var freezeFor = 3.0
    @Option(help: "The key space (the store holds at most this many items).") var keys = 2000
    @Option(help: "Milliseconds between two saves of one writer.") var pace = 20
    @Option(help: "Run in this directory (kept); default: a new temporary directory, removed when every check passed.")
    var directory: String?
    @Flag(help: "An accelerated month: every option below at once (see the discussion).") var month = false
    @Option(help: "Seconds of ledger history kept; the hub's process purges all along.") var historyRetention: Double?
    @Option(help: "Seconds a consumer counts as alive after it last recorded its position.") var consumerLease: Double?
    @Flag(help: "A peer of the same user that sends forged and replayed hub messages.") var hostilePeer = false
    @Option(help: "Seconds between two long freezes of the hub's process (0: none).") var hubFreezeEvery = 0.0
    @Option(help: "How long the hub's process stays frozen.") var hubFreezeFor = 6.0
    @Flag(help: "Every other worker in a PID namespace of its own (unshare --pid), where the machine allows it.") var pidNamespaces = false
    @Option(help: "Seconds between two files for a sync-agent run agent (0: no agent); every other one is dropped while the write lock is held.")
    var inboxEvery = 0.0
    @Option(help: "How long the write lock is held around an inbox drop, in seconds (past the agent's 10 s busy timeout).") var lockFor = 11.0
    @Flag(help: "A writer with its clock a year ahead (faketime): sync-agent imports, and watchers SIGKILLed.") var skewedClock = false
    @Option(help: "Seconds between two sync-agent watch processes under a low descriptor limit (0: none).") var descriptorProbeEvery = 0.0
    @Flag(help: "A backup in the middle of the run, restored with sync-agent restore under two watchers after the checks.") var restoreDrill = false

    /// The options, with --month's values where it is given.
    private var profile: Profile {
        var p = Profile(
            historyRetention: historyRetention, consumerLease: consumerLease, hostilePeer: hostilePeer,
            hubFreezeEvery: hubFreezeEvery, hubFreezeFor: hubFreezeFor, pidNamespaces: pidNamespaces, inboxEvery: inboxEvery,
            skewedClock: skewedClock, descriptorProbeEvery: descriptorProbeEvery, restoreDrill: restoreDrill)
        if month {
            p.historyRetention = p.historyRetention ?? 3
            p.consumerLease = p.consumerLease ?? 30
            p.hostilePeer = true
            p.hubFreezeEvery = p.hubFreezeEvery > 0 ? p.hubFreezeEvery : 25
            p.pidNamespaces = true
            p.inboxEvery = p.inboxEvery > 0 ? p.inboxEvery : 10
            p.skewedClock = true
            p.descriptorProbeEvery = p.descriptorProbeEvery > 0 ? p.descriptorProbeEvery : 8
            p.restoreDrill = true
        }
        if p.pidNamespaces && !Self.pidNamespacesWork() {
            FileHandle.standardError.write(
                Data("ambar-soak: cannot create PID namespaces here (unshare --pid needs root or user namespaces); every worker runs in this one\n".utf8))
            p.pidNamespaces = false
            p.pidNamespacesUnavailable = true
        }
        return p
    }

    func validate() throws {
        guard seconds > 0, processes >= 3, killEvery > 0, freezeEvery > 0, freezeFor > 0, keys >= 100, pace >= 0 else {
            throw ValidationError("--seconds, --kill-every, --freeze-every, --freeze-for must be positive, --processes at least 3, --keys at least 100.")
        }
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let root =
            directory.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("ambar-soak-\(getpid())")
        for sub in ["control", "events", "logs"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let profile = self.profile
        let storeUUID = try seedStore(in: root)
        let recorder = try LedgerRecorder(root: root)
        try recorder.start()
        let slots = makeSlots(root: root, profile: profile)
        var soak = ChaosLoop(
            slots: slots, root: root, probe: HubProbe(directory: root),
            killEvery: killEvery, freezeEvery: freezeEvery, freezeFor: freezeFor)
        soak.hubFreezeEvery = profile.hubFreezeEvery
        soak.hubFreezeFor = hubFreezeFor
        let hostile = profile.hostilePeer ? HostilePeer(root: root, storeUUID: storeUUID) : nil
        var passed = false
        defer {
            soak.stopAll()
            if passed && directory == nil { try? FileManager.default.removeItem(at: root) }
        }
        try soak.startAll()
        if profile.inboxEvery > 0 {
            let inbox = InboxDriver(root: root, keys: keys, every: profile.inboxEvery, lockFor: lockFor, retentionArguments: profile.retentionArguments)
            try inbox.start(executableDirectory: URL(fileURLWithPath: executable).deletingLastPathComponent())
            soak.inbox = inbox
        }
        if profile.descriptorProbeEvery > 0 {
            soak.descriptorProbe = try DescriptorLimitProbe(
                root: root, every: profile.descriptorProbeEvery, executableDirectory: URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        if profile.skewedClock {
            soak.skewedWriter = try SkewedClockWriter(
                root: root, keys: keys, every: 6, executableDirectory: URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        if profile.restoreDrill {
            soak.restoreDrill = try RestoreDrill(root: root, executableDirectory: URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        hostile?.start()
        soak.run(seconds: Double(seconds))
        soak.descriptorProbe?.stop()
        soak.skewedWriter?.stop()
        let forged = hostile?.stop()
        let inboxOutcome = soak.inbox?.finish(timeout: 90)
        soak.recordLockHolds(soak.inbox?.lockIntervals ?? [])
        let ending = try soak.finish()
        let recording = recorder.stop()
        var report = try SoakVerification(
            root: root, slots: slots, timeline: soak.timeline, ending: ending, recorded: recording.entries,
            samples: recording.samples, purging: profile.historyRetention != nil
        ).verify()
        report.problems += recording.failures
        if let inboxOutcome {
            report.inbox = (dropped: soak.inbox?.dropped.count ?? 0, lockHolds: soak.inbox?.lockHolds ?? 0, processed: inboxOutcome.processed)
            if !inboxOutcome.failed.isEmpty { report.problems.append("inbox files in failed/: \(inboxOutcome.failed.joined(separator: ", "))") }
            if !inboxOutcome.waiting.isEmpty { report.problems.append("inbox files never imported: \(inboxOutcome.waiting.joined(separator: ", "))") }
        }
        report.forgedSent = forged
        if let drill = soak.restoreDrill {
            drill.restoreUnderWatchers()
            report.problems += drill.problems
            report.restore = drill.outcome ?? "no backup was taken"
        }
        if let skewed = soak.skewedWriter {
            report.skewedClock = (imports: skewed.imports, killedWatchers: skewed.killedWatchers, refusedWhileLocked: skewed.refusedWhileLocked)
            report.problems += skewed.problems
        }
        if let probe = soak.descriptorProbe {
            report.descriptorProbes = probe.outcomes
            report.problems += probe.problems
        }
        SoakSummary(
            report: report, timeline: soak.timeline, slots: slots, processes: processes, seconds: seconds,
            killEvery: killEvery, freezeEvery: freezeEvery, freezeFor: freezeFor, keys: keys, profile: profile
        ).print(root: root)
        passed = report.converged
        if !passed { throw ExitCode(1) }
    }

    /// The store, created with half the key space, in one batch insert; returns its UUID.
    private func seedStore(in root: URL) throws -> UUID {
        let coordinator = try PersistentStoreCoordinator(model: try SoakModel.model(), store: .sqlite(SoakModel.storeURL(in: root)))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "soak.seed")
        let rows: [[String: AttributeValue]] = (0..<Int64(keys / 2)).map { key in
            ["key": .integer(key), "name": .string("item \(key) r0"), "value": .integer(0), "revision": .integer(0), "writer": .string("seed")]
        }
        _ = try context.performAndWait { () throws(AmbarError) in try context.batchInsert(entityName: SoakModel.entity, rows: rows) }
        guard let uuid = UUID(uuidString: coordinator.storeIdentifier) else { throw SoakFailure("the store's UUID is not valid") }
        return uuid
    }

    private var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Whether `unshare --pid --fork` works here.
    static func pidNamespacesWork() -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
            let probe = try? SpawnedProcess("/usr/bin/unshare", ["--pid", "--fork", "--mount-proc", "--kill-child", "/bin/true"])
        else { return false }
        return probe.waitForExit(timeout: 10) == 0
    }

    private func makeSlots(root: URL, profile: Profile) -> [WorkerSlot] {
        let executable = self.executable
        let cycle: [WorkerRole] = [.importer, .updater, .deleter, .watcher]
        return (0..<processes).map { index in
            let name = "p\(index)"
            let role = index == 0 ? WorkerRole.watcher : cycle[(index - 1) % cycle.count]
            let sentinel = index == 0
            let log = root.appendingPathComponent("logs/\(name).log")
            let arguments =
                [
                    "worker", "--directory", root.path, "--name", name, "--role", role.rawValue,
                    "--keys", String(keys), "--pace", String(pace),
                ] + (sentinel ? ["--may-not-serve-hub"] : [])
                + profile.retentionArguments
            // Every other worker (never the sentinel) in a PID namespace of its own.
            let namespaced = profile.pidNamespaces && index % 2 == 1
            return WorkerSlot(name: name, role: role, isSentinel: sentinel, inPIDNamespace: namespaced) { events in
                if namespaced {
                    return try SpawnedProcess(
                        "/usr/bin/unshare", ["--pid", "--fork", "--mount-proc", "--kill-child", executable] + arguments + ["--events", events], log: log)
                }
                return try SpawnedProcess(executable, arguments + ["--events", events], log: log)
            }
        }
    }
}

/// What the run adds to the basic chaos.
struct Profile {
    var historyRetention: Double?
    var consumerLease: Double?
    var hostilePeer: Bool
    var hubFreezeEvery: Double
    var hubFreezeFor: Double
    var pidNamespaces: Bool
    var inboxEvery: Double
    var skewedClock: Bool
    var descriptorProbeEvery: Double
    var restoreDrill: Bool
    var pidNamespacesUnavailable = false

    /// `--history-retention` and `--consumer-lease`, as workers and `sync-agent run` take them:
    /// whichever process serves the hub purges with its own.
    var retentionArguments: [String] {
        (historyRetention.map { ["--history-retention", String($0)] } ?? []) + (consumerLease.map { ["--consumer-lease", String($0)] } ?? [])
    }
}
