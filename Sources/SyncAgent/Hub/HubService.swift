import AmbarCore
import AmbarDataStack
import ServiceLifecycle
import SharedStoreIPC

/// What `sync-agent hub` runs, as one swift-service-lifecycle `Service`: the hub (started
/// already), the database server's doorbell for a store on a server, and the store's upkeep
/// (ledger retention, WAL checkpoints), until the group's graceful shutdown — or until the file
/// at the store's path is no longer the store it opened (a restore): then it throws
/// ``AmbarError/storeReplaced(path:)``, so that the hub exits non-zero and the new store's
/// processes elect a hub of their own. The upkeep, the check and the doorbell's listening are
/// child tasks of `run()`; the hub is stopped before it returns, whatever ends it.
struct HubService: Service {
    let hub: SyncHub
    let doorbell: ServerDoorbell?
    let maintenance: StoreMaintenance
    let coordinator: PersistentStoreCoordinator
    /// Held until the hub has stopped: no process elects a second hub meanwhile.
    let electionLock: HubElectionLock?

    func run() async throws {
        let replaced = await withTaskGroup(of: AmbarError?.self) { group -> AmbarError? in
            group.addTask {
                // The store's upkeep, every half second.
                while !Task.isCancelled {
                    maintenance.runDue()
                    do { try await Task.sleep(for: .milliseconds(500)) } catch { break }
                }
                return nil
            }
            group.addTask { await storeReplacement(of: coordinator) }
            if let doorbell {
                group.addTask {
                    await doorbell.run()  // until cancelled
                    return nil
                }
            }
            group.addTask {
                try? await gracefulShutdown()  // try?: it throws only when cancelled, which also means stop
                return nil
            }
            // The upkeep and the doorbell never end on their own: the first to end is graceful
            // shutdown (nil), or the store replaced.
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        await hub.stop()
        withExtendedLifetime(electionLock) {}
        if let replaced { throw replaced }
    }
}
