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
/// head token), pings the watchdog from the hub's event loop, reloads its configuration on SIGHUP
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
        try await AgentService.run(logger: logger, beside: try metrics.map { [try $0.service(logger: logger)] } ?? []) {
            try await serve(settings: settings, metrics: metrics, logger: logger)
        }
    }

    /// Opens the store, serves the hub and keeps the store's upkeep until graceful shutdown.
    private func serve(settings: LiveSettings, metrics: MetricsEndpoint?, logger: Logger) async throws {
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
        defer { withExtendedLifetime(lock) {} }  // held until the hub has stopped

        // Peers must be the store file's owner or in its group; for a store on a server, the
        // shared directory's.
        let ownerSource = directory.serverURL == nil ? directory.storeFile : directory.url
        var hubConfiguration = try SyncHub.Configuration(socketPath: socketPath, storeUUID: uuid, storeFile: ownerSource)
        hubConfiguration.inheritedSocket = inherited
        hubConfiguration.maximumPeers = settings.value.maximumPeers
        try DescriptorBudget.require(8, for: "starting the hub")  // its event loop stops the process on EMFILE
        let hub = try await SyncHub.start(hubConfiguration)
        // For a store on a server, this hub is the host's one listener for the server's doorbell.
        let doorbell = ServerDoorbell.start(coordinator: coordinator, hub: hub)
        // The hub's process keeps the store's upkeep: ledger retention and WAL checkpoints.
        let maintenance = StoreMaintenance(coordinator: coordinator, retention: settings.value.retention)
        let upkeep = Task.detached {
            while !Task.isCancelled {
                maintenance.runDue()
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        defer { upkeep.cancel() }
        var failure: (any Error)?
        do {
            // Until graceful shutdown, or until the store file is replaced: the hub then
            // exits non-zero, and the new store's processes elect a hub of their own.
            try await until({ await storeReplacement(of: coordinator) }) {
                await Supervision.serveUntilShutdown(
                    logger: logger,
                    status: {
                        let peers = await hub.peers().count
                        let history =
                            (try? coordinator.historySummary()).map { "head token \($0.headToken), \($0.transactions) in the ledger" }
                            ?? "ledger unreadable"
                        let listening = doorbell.map { ", server doorbell \($0.state)" } ?? ""
                        return "serving \(peers) peer\(peers == 1 ? "" : "s"), \(history)\(listening)"
                    },
                    afterReady: {
                        // Keep-alives come from the loop that serves the peers: if it hangs, they stop.
                        if let interval = Watchdog.keepAliveInterval {
                            logger.info("watchdog armed", metadata: ["interval": "\(interval)"])
                            hub.onEventLoop(every: interval) { ServiceNotifier.notify(.watchdog) }
                        }
                    },
                    reload: {
                        let reloaded = try settings.reload()
                        try maintenance.setRetention(reloaded.retention)
                        await hub.setMaximumPeers(reloaded.maximumPeers)
                    })
            }
        } catch {
            failure = error
        }
        await doorbell?.stop()
        await hub.stop()
        if let failure { throw failure }
    }
}
