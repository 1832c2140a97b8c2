import AmbarCore
import AmbarDataStack
import ServiceLifecycle

/// Sharing as a swift-service-lifecycle `Service`: in a `ServiceGroup`, it shares until the
/// group's graceful shutdown (SIGTERM, for a group that listens for it) or cancellation, then
/// stops sharing (``SharedStoreSync/stop()``) and returns.
///
/// Made with ``SharedStoreSync/init(sharing:configuration:)``, sharing's loops (the hub
/// connection, the ledger poll) run as child tasks of `run()`; made with
/// ``SharedStoreSync/start(stack:configuration:)``, they run already in a task of their own, and
/// `run()` binds their end to the group's.
///
/// ```swift
/// let sync = try SharedStoreSync(sharing: stack, configuration: .sharedDirectory(directory))
/// let group = ServiceGroup(services: [sync, consumer.service(handle)], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// Services shut down in the reverse of their order in the group: list sharing first, so that the
/// consumers and servers that use it stop before it does.
///
/// When sharing ends for good (the store file replaced; see ``SharedStoreSync/failure``), `run()`
/// throws that error: the group shuts down and the process can exit non-zero, for the service
/// manager to restart it on the store now at the path.
extension SharedStoreSync: Service {
    /// Shares until graceful shutdown or cancellation, then stops sharing; throws
    /// `AmbarError.storeReplaced(path:)` when the store file was replaced meanwhile.
    public func run() async throws {
        let first = await withTaskGroup(of: AmbarError?.self) { group in
            if takeLoops() {
                // Return when cancelled (below), or when sharing ends for good (as the next does).
                group.addTask {
                    await self.runLoops()
                    return nil
                }
            }
            // Returns at graceful shutdown, or on cancellation.
            group.addTask {
                // try?: it throws only when cancelled, which also means stop
                try? await gracefulShutdown()
                return nil
            }
            group.addTask { await self.waitForFailure() }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        await stop()
        // The loops may end first when sharing fails: the failure is the same either way.
        if let failure = first ?? failure { throw failure }
    }
}
