import AmbarStack
import AmbarTestSupport
import ArgumentParser
import Foundation

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

    func validate() throws {
        guard seconds > 0, processes >= 3, killEvery > 0, freezeEvery > 0, freezeFor > 0, keys >= 100, pace >= 0 else {
            throw ValidationError("--seconds, --kill-every, --freeze-every, --freeze-for must be positive, --processes at least 3, --keys at least 100.")
        }
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let root = directory.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("ambar-soak-\(getpid())")
        for sub in ["control", "events", "logs"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        try seedStore(in: root)
        let slots = makeSlots(root: root)
        var soak = ChaosLoop(
            slots: slots, root: root, probe: HubProbe(directory: root),
            killEvery: killEvery, freezeEvery: freezeEvery, freezeFor: freezeFor)
        var passed = false
        defer {
            soak.stopAll()
            if passed && directory == nil { try? FileManager.default.removeItem(at: root) }
        }
        try soak.startAll()
        soak.run(seconds: Double(seconds))
        let ending = try soak.finish()
        let report = try SoakVerification(root: root, slots: slots, timeline: soak.timeline, ending: ending).verify()
        SoakSummary(
            report: report, timeline: soak.timeline, slots: slots, processes: processes, seconds: seconds,
            killEvery: killEvery, freezeEvery: freezeEvery, freezeFor: freezeFor, keys: keys
        ).print(root: root)
        passed = report.converged
        if !passed { throw ExitCode(1) }
    }

    /// The store, created with half the key space, in one batch insert.
    private func seedStore(in root: URL) throws {
        let coordinator = try PersistentStoreCoordinator(model: try SoakModel.model(), store: .sqlite(SoakModel.storeURL(in: root)))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "soak.seed")
        let rows: [[String: AttributeValue]] = (0..<Int64(keys / 2)).map { key in
            ["key": .integer(key), "name": .string("item \(key) r0"), "value": .integer(0), "revision": .integer(0), "writer": .string("seed")]
        }
        _ = try context.performAndWait { () throws(AmbarError) in try context.batchInsert(entityName: SoakModel.entity, rows: rows) }
    }

    private func makeSlots(root: URL) -> [WorkerSlot] {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let cycle: [WorkerRole] = [.importer, .updater, .deleter, .watcher]
        return (0..<processes).map { index in
            let name = "p\(index)"
            let role = index == 0 ? WorkerRole.watcher : cycle[(index - 1) % cycle.count]
            let sentinel = index == 0
            let log = root.appendingPathComponent("logs/\(name).log")
            let arguments = [
                "worker", "--directory", root.path, "--name", name, "--role", role.rawValue,
                "--keys", String(keys), "--pace", String(pace),
            ] + (sentinel ? ["--may-not-serve-hub"] : [])
            return WorkerSlot(name: name, role: role, isSentinel: sentinel) { events in
                try SpawnedProcess(executable, arguments + ["--events", events], log: log)
            }
        }
    }
}
