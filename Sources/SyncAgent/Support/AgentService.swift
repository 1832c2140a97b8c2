import AmbarCore
import AmbarSystemd
import Foundation
import Logging
import ServiceLifecycle

/// A long-running command as one swift-service-lifecycle `ServiceGroup`: SIGTERM and SIGINT shut
/// it down gracefully, and the process exits 0 once every service returned — or with
/// ``ShutdownDeadline/forcedExitStatus`` once ``ShutdownDeadline`` passes.
///
/// The group runs from the first moment, so its signal handlers are in place while the command
/// still opens its store (a slow or frozen database server): `setUp` opens what the command
/// needs and adds the services that do its work to the running group (``AgentServices/add(_:)``);
/// a failure of `setUp` or of any service ends the group with that error (a non-zero exit).
/// Services shut down in the reverse of the order they were added: add what others use first
/// (sharing), the notifier for the service manager last.
struct AgentService: Service {
    let body: @Sendable () async throws -> Void

    func run() async throws { try await body() }

    /// Runs `body` in a service group until it returns after a graceful shutdown, with `beside`
    /// (a metrics endpoint) running until then too.
    static func run(logger: Logger, beside: [any Service] = [], _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await run(logger: logger, first: beside, command: AgentService(body: body), commandEndsGroup: true)
    }

    /// Runs a group of `beside` (a metrics endpoint) and what `setUp` adds to it, until graceful
    /// shutdown or until one of them fails.
    static func runGroup(
        logger: Logger, beside: [any Service] = [], _ setUp: @escaping @Sendable (AgentServices) async throws -> Void
    ) async throws {
        let services = AgentServices()
        let command = AgentService { try await setUp(services) }
        try await run(logger: logger, first: beside, command: command, commandEndsGroup: false, services: services)
    }

    private static func run(
        logger: Logger, first beside: [any Service], command: AgentService, commandEndsGroup: Bool, services: AgentServices? = nil
    ) async throws {
        let deadline = ShutdownDeadline(logger: logger)
        defer { withExtendedLifetime(deadline) {} }
        typealias Configured = ServiceGroupConfiguration.ServiceConfiguration
        // A command that is the work ends the group when it returns; one that only sets the work
        // up leaves it to the services it added.
        let commandService = Configured(service: command, successTerminationBehavior: commandEndsGroup ? .gracefullyShutdownGroup : .ignore)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: beside.map { Configured(service: $0) } + [commandService], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        services?.attach(group)
        try await group.run()
    }
}

/// The running group of a command (``AgentService/runGroup(logger:beside:_:)``), to add the
/// services that do its work once they are set up.
final class AgentServices: Sendable {
    private let group = Locked<ServiceGroup?>(nil)

    fileprivate func attach(_ group: ServiceGroup) { self.group.withLock { $0 = group } }

    /// Starts `service` in the group (unless it is shutting down already: then it never runs).
    func add(_ service: any Service) async {
        guard let group = group.withLock({ $0 }) else { return }
        await group.addServiceUnlessShutdown(service)
    }
}
