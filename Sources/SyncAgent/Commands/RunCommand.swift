import AmbarCore
import AmbarDataStack
import AmbarSystemd
import ArgumentParser
import Foundation
import Logging
import RecordImport
import SharedStoreIPC

/// `sync-agent run --name NAME`: the long-running agent (`sync-agent@NAME.service`).
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Keep a main context live and import the NDJSON files dropped into <directory>/inbox/NAME/.",
        discussion: """
            Write a file elsewhere (or under a name starting with a dot) and rename it into the \
            inbox. Each file is imported in one transaction, then moved to processed/NAME/; a file \
            with a bad line (or a line over max-line-bytes, or larger than max-file-bytes) goes to \
            failed/NAME/ with <file>.error.txt beside it and nothing of it written. When the store \
            cannot take a file (busy, full, read-only, I/O error) it stays in the inbox and is tried \
            again after 1 s, doubling to 60 s; STATUS= says why. The file's identity is saved with \
            its objects, so after a crash a file is never imported twice. Under systemd: READY=1, STATUS=, WATCHDOG=1 from the import loop, \
            SIGHUP reloads --config, SIGTERM finishes the file in progress and stops.
            """)

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var socket: SocketOptions
    @OptionGroup var service: ServiceOptions
    @OptionGroup var metricsOptions: MetricsOptions

    @Option(name: .long, help: "The agent's name: its inbox is <directory>/inbox/NAME/.")
    var name: String

    @Option(name: .long, help: "The entity the files hold (default: $AMBAR_ENTITY).")
    var entity: String?

    @Option(name: .long, help: "The attribute to upsert by (default: $AMBAR_KEY; none: every line inserts).")
    var key: String?

    /// `--entity`, else `$AMBAR_ENTITY`.
    var resolvedEntity: String? { entity ?? ProcessInfo.processInfo.environment["AMBAR_ENTITY"].flatMap { $0.isEmpty ? nil : $0 } }
    /// `--key`, else `$AMBAR_KEY`.
    var resolvedKey: String? { key ?? ProcessInfo.processInfo.environment["AMBAR_KEY"].flatMap { $0.isEmpty ? nil : $0 } }

    @Option(name: .long, help: "How often to look at the inbox, in milliseconds.")
    var pollInterval = 200

    func validate() throws {
        guard !name.isEmpty, !name.contains("/"), !name.hasPrefix(".") else {
            throw ValidationError("--name must be a plain name (no '/', not starting with '.').")
        }
        guard pollInterval > 0 else { throw ValidationError("--poll-interval must be positive.") }
        guard resolvedEntity != nil else {
            throw ValidationError("Name the entity: --entity NAME or AMBAR_ENTITY=NAME (the unit reads it from /etc/ambar/agent-<name>.env).")
        }
    }

    func run() async throws {
        let metrics = try metricsOptions.endpoint(command: "run")
        let settings = try service.settings()
        bootstrapLogging(identifier: "sync-agent@\(name)", level: settings.value.logLevel)
        let logger = Logger(label: "ambar.agent.run")
        // Everything inside the service group, whose signal handlers are in place from the start:
        // a SIGTERM while the store is still opening (a slow or frozen server) stops it cleanly.
        try await AgentService.runGroup(logger: logger, beside: try metrics.map { [try $0.service(logger: logger)] } ?? []) { services in
            try await setUp(services, settings: settings, metrics: metrics, logger: logger)
        }
    }

    /// Opens the store, joins its sharing and starts importing the inbox; the group then runs
    /// until graceful shutdown (the worker finishes the file in progress), or until the store
    /// file is replaced (sharing fails: exit non-zero, and the files not yet in the store at the
    /// path stay in the inbox).
    private func setUp(_ services: AgentServices, settings: LiveSettings, metrics: MetricsEndpoint?, logger: Logger) async throws {
        let stack = try openExistingStack(directory)
        let coordinator = try stack.mainCoordinator
        metrics?.collect { LedgerMetrics.collect(coordinator) }
        let decoder = try ImportRecordDecoder(model: stack.model, entityName: resolvedEntity ?? "", keyAttribute: resolvedKey)
        let inbox = try Inbox(root: directory.url, name: name)
        var sharing = try socket.sharing(in: directory.url, as: "sync-agent run \(name)")
        sharing.retention = settings.value.retention
        sharing.mergePositionName = "agent-\(name)"
        // Sharing's loops run in the group, as child tasks of its service.
        let sync = try SharedStoreSync(sharing: stack, configuration: sharing)
        let merges = sync.observeRemoteMerges { event in
            logger.debug("merged", metadata: ["token": "\(event.token)", "peer": "\(event.processID)", "latency-ms": "\(Int(event.latency * 1000))"])
        }
        let worker = InboxWorker(
            inbox: inbox, name: name, stack: stack, decoder: decoder,
            pollInterval: Double(pollInterval) / 1000, limits: settings.value.inboxLimits, logger: logger)
        worker.start()  // before READY=1: readiness means the inbox is watched
        let keepAliveWindow = Watchdog.keepAliveInterval.map { $0 * 2 } ?? .seconds(60)
        await services.add(sync)
        await services.add(InboxWorkerService(worker: worker, onStopped: { merges.cancel() }))
        await services.add(
            SystemdNotifyService(
                status: {
                    let c = worker.counters
                    // try?: a head that cannot be read now is shown as "?"; the ledger says why elsewhere
                    let head = (try? coordinator.currentHistoryToken()).map(String.init) ?? "?"
                    let base = "\(c.files) files imported (\(c.objects) objects), \(c.failed) failed, \(c.waiting) waiting; head token \(head)"
                    return c.retrying.map { "\(base); \($0)" } ?? base
                },
                // Keep-alives follow the import loop: while it goes round and can read the inbox.
                isAlive: { worker.isAlive(within: keepAliveWindow) },
                reload: {
                    let reloaded = try settings.reload()
                    try sync.setRetention(reloaded.retention)
                    worker.setLimits(reloaded.inboxLimits)
                },
                statusInterval: .seconds(1), logger: logger))
    }
}
