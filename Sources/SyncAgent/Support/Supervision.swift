import AmbarSystemd
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// A long-running command as one swift-service-lifecycle service: SIGTERM and SIGINT shut it down
/// gracefully, and the process exits 0 once `body` returns — or with
/// ``ShutdownDeadline/forcedExitStatus`` once ``ShutdownDeadline`` passes.
struct AgentService: Service {
    let body: @Sendable () async throws -> Void

    func run() async throws { try await body() }

    /// Runs `body` in a service group until it returns after a graceful shutdown, with `beside`
    /// (a metrics endpoint) running until then too.
    static func run(logger: Logger, beside: [any Service] = [], _ body: @escaping @Sendable () async throws -> Void) async throws {
        let deadline = ShutdownDeadline(logger: logger)
        defer { withExtendedLifetime(deadline) {} }
        // The command ends the group when it returns; the services beside it stop with it.
        typealias Configured = ServiceGroupConfiguration.ServiceConfiguration
        let command = Configured(service: AgentService(body: body), successTerminationBehavior: .gracefullyShutdownGroup)
        let services = [command] + beside.map { Configured(service: $0) }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// The service-manager side of a running command, from READY=1 to STOPPING=1.
enum Supervision {
    /// Reports readiness with `status()`, then calls `afterReady` (where the watchdog is armed),
    /// keeps STATUS= current, handles SIGHUP (RELOADING=1, `reload()`, READY=1), and returns after
    /// sending STOPPING=1 when a graceful shutdown begins.
    static func serveUntilShutdown(
        logger: Logger,
        status: @escaping @Sendable () async -> String,
        afterReady: () -> Void = {},
        reload: @escaping @Sendable () async throws -> Void
    ) async {
        let initial = await status()
        ServiceNotifier.notify(.ready, .status(initial))
        logger.notice("ready", metadata: ["status": "\(initial)"])
        afterReady()
        await withTaskGroup(of: Void.self) { group in
            // STATUS= is only read by a service manager: without one, no polling.
            if ServiceNotifier.isSupervised {
                group.addTask {
                    var last = initial
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(1))
                        guard !Task.isCancelled else { return }
                        let now = await status()
                        if now != last {
                            ServiceNotifier.notify(.status(now))
                            last = now
                        }
                    }
                }
            }
            group.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
                    ServiceNotifier.notify(.reloading)
                    logger.notice("reloading the configuration")
                    do {
                        try await reload()
                        ServiceNotifier.notify(.ready, .status(await status()))
                        logger.notice("configuration reloaded")
                    } catch {
                        // READY=1 must follow RELOADING=1 even when the new configuration is bad:
                        // the old one stays in force.
                        ServiceNotifier.notify(.ready, .status("reload failed, previous configuration kept: \(error)"))
                        logger.error("reload failed; keeping the previous configuration: \(error)")
                    }
                }
            }
            try? await gracefulShutdown()  // try?: it throws only when cancelled, which also means stop
            ServiceNotifier.notify(.stopping)
            logger.notice("stopping")
            FaultInjection.hang("while-stopping")
            group.cancelAll()
        }
    }
}
