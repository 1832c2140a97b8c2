import AmbarCore
import AmbarSystemd
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

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
        let deadline = ShutdownDeadline(logger: logger)
        defer { withExtendedLifetime(deadline) {} }
        try await group(logger: logger, beside: beside, signals: [.sigterm, .sigint], setUp).run()
    }

    /// The group ``runGroup(logger:beside:_:)`` runs, shut down gracefully by `signals`.
    ///
    /// Setting up stays a service of the group until the group's graceful shutdown reaches it,
    /// which is after the services it added (they shut down first): then it runs, in its own
    /// task, every service it added that the group never started (a service added while the
    /// group shuts down is dropped), so that each still stops what it holds.
    static func group(
        logger: Logger, beside: [any Service], signals: [UnixSignal], _ setUp: @escaping @Sendable (AgentServices) async throws -> Void
    ) -> ServiceGroup {
        let services = AgentServices()
        let command = AgentService {
            try await setUp(services)
            try? await gracefulShutdown()  // try?: cancellation ends the wait as shutdown does
            try await services.runNeverStarted()
        }
        let group = makeGroup(logger: logger, beside: beside, command: command, commandEndsGroup: false, signals: signals)
        services.attach(group)
        return group
    }

    private static func run(logger: Logger, first beside: [any Service], command: AgentService, commandEndsGroup: Bool) async throws {
        let deadline = ShutdownDeadline(logger: logger)
        defer { withExtendedLifetime(deadline) {} }
        try await makeGroup(logger: logger, beside: beside, command: command, commandEndsGroup: commandEndsGroup, signals: [.sigterm, .sigint]).run()
    }

    private static func makeGroup(
        logger: Logger, beside: [any Service], command: AgentService, commandEndsGroup: Bool, signals: [UnixSignal]
    ) -> ServiceGroup {
        typealias Configured = ServiceGroupConfiguration.ServiceConfiguration
        // A command that is the work ends the group when it returns; one that only sets the work
        // up leaves it to the services it added.
        let commandService = Configured(service: command, successTerminationBehavior: commandEndsGroup ? .gracefullyShutdownGroup : .ignore)
        return ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: beside.map { Configured(service: $0) } + [commandService], gracefulShutdownSignals: signals, logger: logger))
    }
}

/// The running group of a command (``AgentService/runGroup(logger:beside:_:)``), to add the
/// services that do its work once they are set up.
final class AgentServices: Sendable {
    private let group = Locked<ServiceGroup?>(nil)
    private let added = Locked<[AddedService]>([])

    fileprivate func attach(_ group: ServiceGroup) { self.group.withLock { $0 = group } }

    /// Starts `service` in the group. When the group is shutting down already, it does not start
    /// it: setting up runs it once its own shutdown comes, where it stops at once.
    func add(_ service: any Service) async {
        guard let group = group.withLock({ $0 }) else { return }
        let added = AddedService(service)
        self.added.withLock { $0.append(added) }
        await group.addServiceUnlessShutdown(added)
    }

    /// Runs the services the group never started, the last added first, in the calling task,
    /// whose graceful shutdown has begun: each returns once it has stopped what it holds.
    fileprivate func runNeverStarted() async throws {
        for service in added.withLock({ $0 }).reversed() where service.abandon() {
            try await service.service.run()
        }
    }
}

/// A service added to a running group, which knows whether the group started it.
private final class AddedService: Service {
    private enum State { case waiting, started, runElsewhere }
    let service: any Service
    private let state = Locked(State.waiting)

    init(_ service: any Service) { self.service = service }

    func run() async throws {
        let start = state.withLock { state -> Bool in
            guard case .waiting = state else { return false }
            state = .started
            return true
        }
        if start { try await service.run() }
    }

    /// Whether the group never started it (from now on, it never will).
    func abandon() -> Bool {
        state.withLock { state in
            guard case .waiting = state else { return false }
            state = .runElsewhere
            return true
        }
    }
}
