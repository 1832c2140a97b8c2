import Logging
import ServiceLifecycle
import Synchronization
import XCTest

@testable import SyncAgent

/// The service groups of `sync-agent run` and `hub` (`AgentService.group`), in process: a
/// service that setting up adds while the group already shuts down (a SIGTERM while the store
/// still opens) is dropped by the group, and must still run, to stop what it holds.
final class AgentServicesTests: XCTestCase {
    /// A service that counts the times it ran to its end, which is graceful shutdown.
    private final class StoppingService: Service {
        let stops = Mutex(0)

        func run() async throws {
            try? await gracefulShutdown()  // try?: cancellation ends the wait as shutdown does
            stops.withLock { $0 += 1 }
        }
    }

    func testAServiceAddedWhileTheGroupShutsDownStillRunsAndStops() async throws {
        let late = StoppingService()
        let box = Mutex<ServiceGroup?>(nil)
        let group = AgentService.group(logger: Logger(label: "test"), beside: [], signals: []) { services in
            await box.withLock { $0 }?.triggerGracefulShutdown()
            // Returns once the group's shutdown reaches setting up, the last service: the group
            // no longer starts what is added.
            try? await gracefulShutdown()
            await services.add(late)
        }
        box.withLock { $0 = group }
        try await group.run()
        XCTAssertEqual(late.stops.withLock { $0 }, 1, "the service added during shutdown must run, once")
    }

    func testServicesAddedBeforeShutdownRunInTheGroupAndStopOnce() async throws {
        let early = StoppingService()
        let added = AsyncStream.makeStream(of: Void.self)
        let group = AgentService.group(logger: Logger(label: "test"), beside: [], signals: []) { services in
            await services.add(early)
            added.continuation.yield()
        }
        async let running: Void = group.run()
        for await _ in added.stream { break }
        await group.triggerGracefulShutdown()
        try await running
        // Run by the group, and not again by setting up when its shutdown comes.
        XCTAssertEqual(early.stops.withLock { $0 }, 1)
    }
}
