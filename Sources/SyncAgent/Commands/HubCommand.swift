import AmbarCore
import AmbarDataStack
import AmbarSystemd
import ArgumentParser
import Foundation
import Logging
import SharedStoreIPC

/// `sync-agent hub`: the dedicated hub daemon (the same hub code processes embed).
///
/// Under systemd (`Type=notify`) it adopts the socket named `hub` that the .socket unit passes,
/// reports READY=1 once the store is open and the socket is served, keeps STATUS= current (peers,
/// head token), feeds the watchdog while the hub's event loop answers, reloads its configuration on SIGHUP
/// and stops cleanly on SIGTERM. Started by hand, it binds the socket path itself.
struct HubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hub",
        abstract: "Serve the hub for the processes of a shared store until SIGTERM.",
        discussion:
            "Socket-activated (LISTEN_FDS with the name \"hub\") it serves the inherited socket and never removes its path; otherwise it binds --socket itself, holding <socket dir>/hub.lock so no process elects a second hub."
    )

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var socket: SocketOptions
    @OptionGroup var service: ServiceOptions
    @OptionGroup var metricsOptions: MetricsOptions

    func run() async throws {
        let metrics = try metricsOptions.endpoint(command: "hub")
        let settings = try service.settings()
        bootstrapLogging(level: settings.value.logLevel)
        let logger = Logger(label: "ambar.agent.hub")
        // Everything inside the service group, whose signal handlers are in place from the start:
        // a SIGTERM while the store is still opening (a slow or frozen server) stops it cleanly.
        try await AgentService.runGroup(logger: logger, beside: try metrics.map { [try $0.service(logger: logger)] } ?? []) { services in
            try await setUp(services, settings: settings, metrics: metrics, logger: logger)
        }
    }

    /// Opens the store and starts serving the hub; the group then runs until graceful shutdown,
    /// or until the store file is replaced (exit non-zero).
    private func setUp(_ services: AgentServices, settings: LiveSettings, metrics: MetricsEndpoint?, logger: Logger) async throws {
        let model = try existingModel(directory)
        let coordinator = try PersistentStoreCoordinator(model: model, store: try directory.storeDescription(), name: "ambar.hub")
        metrics?.collect { LedgerMetrics.collect(coordinator) }
        guard let uuid = UUID(uuidString: coordinator.storeIdentifier) else { throw ValidationError("The store has no valid UUID.") }
        let socketPath = socket.path(in: directory.url)
        let inherited = try SocketActivation.listeningSocket(named: "hub")
        // Hold the election lock, so processes never start a second hub beside this one. When
        // socket-activated, systemd guarantees one hub; the lock is then taken only if possible.
        if inherited == nil {
            try FileManager.default.createDirectory(
                atPath: URL(fileURLWithPath: socketPath).deletingLastPathComponent().path, withIntermediateDirectories: true)
        }
        let lock = HubElectionLock.take(forSocket: socketPath)
        if lock == nil && inherited == nil {
            throw ValidationError("Another process already serves the hub at \(socketPath) (it holds \(HubElectionLock.path(forSocket: socketPath))).")
        }

        // Peers must be the store file's owner or in its group; for a store on a server, the
        // shared directory's.
        let ownerSource = directory.serverURL == nil ? directory.storeFile : directory.url
        var hubConfiguration = try SyncHub.Configuration(socketPath: socketPath, storeUUID: uuid, storeFile: ownerSource)
        hubConfiguration.inheritedSocket = inherited
        hubConfiguration.maximumPeers = settings.value.maximumPeers
        hubConfiguration.eventLoopGroup = try AgentEventLoops.group(for: "starting the hub")
        let hub = try await SyncHub.start(hubConfiguration)
        // For a store on a server, this hub is the host's one listener for the server's doorbell.
        let doorbell = ServerDoorbell(coordinator: coordinator, hub: hub)  // listens in HubService's run()
        // The hub's process keeps the store's upkeep: ledger retention and WAL checkpoints.
        let maintenance = StoreMaintenance(coordinator: coordinator, retention: settings.value.retention)
        await services.add(HubService(hub: hub, doorbell: doorbell, maintenance: maintenance, coordinator: coordinator, electionLock: lock))
        if let interval = Watchdog.keepAliveInterval { logger.info("watchdog armed", metadata: ["interval": "\(interval)"]) }
        await services.add(
            SystemdNotifyService(
                status: {
                    let peers = await hub.peers().count
                    // try?: a ledger that cannot be read now is said so in the status line
                    let history = (try? coordinator.historySummary()).map { "head token \($0.headToken), \($0.transactions) in the ledger" }
                    let listening = doorbell.map { ", server doorbell \($0.state)" } ?? ""
                    return "serving \(peers) peer\(peers == 1 ? "" : "s"), \(history ?? "ledger unreadable")\(listening)"
                },
                // Keep-alives follow the loop that serves the peers: if it hangs, they stop.
                isAlive: { await hub.isServing() },
                reload: {
                    let reloaded = try settings.reload()
                    try maintenance.setRetention(reloaded.retention)
                    await hub.setMaximumPeers(reloaded.maximumPeers)
                },
                statusInterval: .seconds(1), logger: logger))
    }
}
