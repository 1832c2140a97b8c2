import AmbarStack
import Dispatch
import Foundation
import Logging
import SharedStoreIPC

/// The main context's view of every item, as a viewer holds it: a results controller over the
/// whole entity with realized objects. Touched on the main queue only.
@MainActor
enum MainView {
    static var controller: FetchedResultsController<ManagedObject>?

    /// The digest of the controller's objects, in key order; their rows go to `rowsPath`, to
    /// compare with the store's when digests disagree.
    static func digest(rowsPath: String) throws(AmbarError) -> RowDigest {
        var keyed: [(Int64, ManagedObject)] = []
        for object in controller?.fetchedObjects ?? [] {
            guard case .integer(let key) = try object.value(forKey: "key") else { continue }
            keyed.append((key, object))
        }
        var digest = RowDigest()
        var rows = ""
        for (_, object) in keyed.sorted(by: { $0.0 < $1.0 }) { rows += try digest.add(object) + "\n" }
        try? rows.write(toFile: rowsPath, atomically: true, encoding: .utf8)
        return digest
    }
}

/// One soak process: shares the store, records every remote merge, runs its role's load until
/// the orchestrator asks it to stop, then reports a digest of its main context once it has merged
/// through the head the orchestrator names. SIGTERM stops sharing and exits 0.
final class SoakWorker: Sendable {
    private let stack: DataStack
    private let events: EventLog
    private let eventsPath: String
    private let role: WorkerRole
    private let name: String
    private let keys: Int
    private let pace: TimeInterval
    private let control: URL
    private let configuration: SharingConfiguration
    private let loadStopped = Locked(false)
    private let sync = Locked<SharedStoreSync?>(nil)
    private let keep = Locked<[AnyObject]>([])
    private let logger = Logger(label: "ambar.soak.worker")

    init(
        directory: URL, name: String, role: WorkerRole, keys: Int, pace: TimeInterval, eventsPath: String, mayServeHub: Bool,
        retention: HistoryRetention
    ) throws {
        stack = try DataStack.open(model: .model(try SoakModel.model()), storeURL: SoakModel.storeURL(in: directory), name: "soak")
        events = try EventLog(path: eventsPath)
        self.eventsPath = eventsPath
        self.role = role
        self.name = name
        self.keys = keys
        self.pace = pace
        control = directory.appendingPathComponent("control")
        var configuration = SharingConfiguration.sharedDirectory(directory)
        configuration.mergePositionName = "soak-\(name)"
        configuration.mayServeHub = mayServeHub
        configuration.retention = retention
        self.configuration = configuration
    }

    /// Starts sharing, the view, the load and the control loop; returns at once.
    func start() throws {
        let main = try stack.mainContext
        // The view is loaded before sharing starts, on purpose: what others commit in between must
        // still reach it (SharedStoreSync.start re-reads the main context).
        try main.performAndWait { () throws(AmbarError) in
            let result = MainActor.assumeIsolated { () -> Result<Void, AmbarError> in
                var request = SoakModel.allItems()
                request.returnsObjectsAsFaults = false
                let controller = FetchedResultsController(fetchRequest: request, context: main)
                do throws(AmbarError) { try controller.performFetch() } catch { return .failure(error) }
                MainView.controller = controller
                return .success(())
            }
            try result.get()
        }
        let started = DispatchSemaphore(value: 0)
        let failure = Locked<Error?>(nil)
        Task.detached { [self] in
            do {
                let sync = try await SharedStoreSync.start(stack: stack, configuration: configuration)
                let events = self.events
                let observation = sync.observeRemoteMerges { event in
                    if event.historyExpired {
                        events.write("x \(event.token)")
                        return
                    }
                    events.write("m \(event.token) \(EventLog.now()) \(event.instanceID)")
                    // A viewer shows what changed: read the refreshed objects again.
                    for id in event.refreshed { _ = try? main.registeredObject(for: id)?.value(forKey: "value") }
                }
                self.sync.withLock { $0 = sync }
                keep.withLock { $0.append(observation) }
                events.write("instance \(ProcessInstance.id)")
                events.write("start \(sync.mergedThrough) \(EventLog.now())")
            } catch {
                failure.withLock { $0 = error }
            }
            started.signal()
        }
        started.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        handleTermination()
        Thread.detachNewThread { [self] in controlLoop() }
        if role != .watcher { Thread.detachNewThread { [self] in loadLoop() } }
    }

    private func loadLoop() {
        var generator: LoadGenerator
        do {
            generator = try LoadGenerator(role: role, name: name, keys: keys, stack: stack)
        } catch {
            logger.error("cannot start the load: \(error)")
            events.write("f other")
            return
        }
        var saves = 0
        while !loadStopped.withLock({ $0 }) {
            do throws(AmbarError) {
                try generator.step()
                saves += 1
            } catch {
                let kind = LoadGenerator.kind(of: error)
                if kind == "other" { logger.error("save failed: \(error)") }
                events.write("f \(kind)")
            }
            Thread.sleep(forTimeInterval: pace)
        }
        events.write("stopped \(saves)")
    }

    /// Looks at the orchestrator's control files ten times a second.
    private func controlLoop() {
        var digested = false
        while true {
            Thread.sleep(forTimeInterval: 0.1)
            if FileManager.default.fileExists(atPath: control.appendingPathComponent("stop-load").path) {
                loadStopped.withLock { $0 = true }
            }
            guard !digested,
                let text = try? String(contentsOf: control.appendingPathComponent("digest-at"), encoding: .utf8),
                let head = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                let sync = sync.withLock({ $0 }), sync.mergedThrough >= head,
                let main = try? stack.mainContext
            else { continue }
            digested = true
            // Queued behind every merge through `head` (each was queued when the cursor moved).
            let events = self.events
            let rowsPath = eventsPath + ".rows"
            main.enqueue {
                MainActor.assumeIsolated {
                    do throws(AmbarError) {
                        let digest = try MainView.digest(rowsPath: rowsPath)
                        events.write("registered \(main.registeredObjectCount)")
                        events.write("rejected \(sync.rejectedMessages)")
                        events.write("digest \(head) \(digest)")
                    } catch {
                        events.write("digest \(head) failed \(error)")
                    }
                }
            }
        }
    }

    /// SIGTERM: stop the load, stop sharing (which records the cursor), exit 0.
    private func handleTermination() {
        signal(SIGTERM, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        source.setEventHandler { [self] in
            loadStopped.withLock { $0 = true }
            Task.detached { [self] in
                await sync.withLock { $0 }?.stop()
                exit(0)
            }
        }
        source.resume()
        keep.withLock { $0.append(source as AnyObject) }
    }
}
