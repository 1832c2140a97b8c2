import AmbarStack
import Dispatch
import Foundation
import Logging
import NIOCore
import NIOPosix

/// Keeps a stack's main context in step with every other process of its shared directory.
///
/// After each commit of this process the saved object IDs go to the hub, which relays them to the
/// other processes. Each process merges other processes' transactions into its main context in
/// ledger order, each exactly once, reading them from the ledger in the store — so a lost message,
/// a dead hub or a restart only delays a merge. When no hub answers, one process takes the hub
/// lock and serves the hub itself; while none is reachable, everyone polls the ledger.
public final class SharedStoreSync: Sendable {
    private struct State {
        var cursor: Int64 = 0
        var client: SyncClient?
        var hub: SyncHub?
        var lock: HubElectionLock?
        var stopped = false
        var connecting = false
        /// The running connect loop; ``stop()`` waits for it before shutting the event loops down.
        var connectTask: Task<Void, Never>?
        var lastCursorWrite = Date.distantPast
        var lastCursorWritten: Int64 = -1
        var lastWatchdog = Date.distantPast
        var lastActivity = Date()
        var lastCheckpoint = Date()
        var truncatedSinceActivity = false
        /// What Ambar itself last wrote, as the data-version watchdog saw it: the ledger's head and a
        /// fingerprint of the consumer cursors (which processes update without a ledger entry).
        var headAtLastCheck: Int64 = 0
        var cursorsAtLastCheck: [HistoryCursor] = []
        /// Transactions whose merge is queued on the main context, in ledger order; one main-queue
        /// block (``mergeScheduled``) merges all of them at once.
        var pendingMerges: [PendingMerge] = []
        var mergeScheduled = false
    }

    /// A transaction waiting for its merge into the main context.
    private struct PendingMerge {
        let note: DidSaveNotification
        let token: Int64
        let author: String?
        let processID: Int32
        let since: Date
    }

    /// The configuration in use.
    public let configuration: SharingConfiguration
    private let stack: DataStack
    private let main: ManagedObjectContext
    private let coordinator: PersistentStoreCoordinator
    private let storeUUID: UUID
    private let storeFile: URL
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "ambar.sync")
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let events = ObserverList<RemoteMergeEvent>()
    private let observations = Locked<[ContextObservation]>([])
    private let timer: Locked<TimerBox?> = Locked(nil)
    private let detector: StoreChangeDetector?

    /// A dispatch timer, which is thread-safe but not marked `Sendable`.
    private final class TimerBox: @unchecked Sendable {
        let timer: any DispatchSourceTimer
        init(_ timer: any DispatchSourceTimer) { self.timer = timer }
    }
    static let logger = Logger(label: "ambar.sync")

    private init(stack: DataStack, configuration: SharingConfiguration) throws {
        guard let storeURL = stack.storeURL else {
            throw SharingError.notShareable("an in-memory store cannot be shared between processes")
        }
        self.stack = stack
        self.configuration = configuration
        self.main = try stack.mainContext
        self.coordinator = try stack.writerCoordinator
        self.storeFile = storeURL
        guard let uuid = UUID(uuidString: coordinator.storeIdentifier) else {
            throw SharingError.notShareable("the store's UUID \(coordinator.storeIdentifier) is not valid")
        }
        self.storeUUID = uuid
        self.detector = try coordinator.makeChangeDetector()
        _ = try detector?.hasChanged()
    }

    /// Starts sharing `stack` (which must be ready) with the other processes of the directory.
    ///
    /// Objects its main context already holds are re-read once (results controllers refetch), so
    /// whatever was committed between their loading and this call is not missed.
    public static func start(stack: DataStack, configuration: SharingConfiguration) async throws -> SharedStoreSync {
        try await stack.load()
        let sync = try SharedStoreSync(stack: stack, configuration: configuration)
        try sync.begin()
        return sync
    }

    /// Why a stack cannot be shared.
    public enum SharingError: Error, Sendable, CustomStringConvertible {
        case notShareable(String)
        public var description: String {
            switch self { case .notShareable(let reason): return "cannot share the store: \(reason)" }
        }
    }

    private func begin() throws {
        let socketDirectory = URL(fileURLWithPath: configuration.resolvedSocketPath).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: socketDirectory, withIntermediateDirectories: true)
        let start = try coordinator.currentHistoryToken()
        let cursors = try coordinator.historyCursors()
        state.withLock { $0.cursor = start; $0.headAtLastCheck = start; $0.cursorsAtLastCheck = cursors }
        // What the main context loaded before now may predate `start`: re-read it once (results
        // controllers refetch), so a commit between that load and this start is not missed.
        let mainContext = self.main
        mainContext.enqueue { if mainContext.registeredObjectCount > 0 { Self.refreshAll(mainContext) } }
        // Every root save of this process goes out: on the writer coordinator and, when separate,
        // on the main one.
        let main = try stack.mainCoordinator
        let locals = main === coordinator ? [coordinator] : [main, coordinator]
        let list = locals.map { local in local.observeDidSave { [weak self] note in self?.localDidSave(note) } }
        observations.withLock { $0 = list }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + configuration.pollInterval, repeating: configuration.pollInterval)
        timer.setEventHandler { [weak self] in self?.poll() }
        timer.resume()
        let box = TimerBox(timer)
        self.timer.withLock { $0 = box }
        startConnecting()
    }

    /// Stops sharing: closes the hub connection, stops serving the hub if this process did, and
    /// records this process's position in the ledger.
    public func stop() async {
        let (client, hub) = state.withLock { s -> (SyncClient?, SyncHub?) in
            s.stopped = true
            defer { s.client = nil; s.hub = nil }
            return (s.client, s.hub)
        }
        timer.withLock { $0?.timer.cancel(); $0 = nil }
        observations.withLock { list in list.forEach { $0.cancel() }; list = [] }
        // A connect in flight must end before the event loops go: a promise made on a loop that
        // has shut down can never complete.
        await state.withLock { $0.connectTask }?.value
        await client?.close()
        await hub?.stop()
        state.withLock { $0.lock = nil }  // released only once the hub has stopped
        queue.sync { writeCursor(force: true) }
        try? await group.shutdownGracefully()
    }

    // MARK: - Observing

    /// Calls `callback` after each remote transaction was merged into the main context (on the
    /// main queue).
    public func observeRemoteMerges(_ callback: @escaping @Sendable (RemoteMergeEvent) -> Void) -> ContextObservation {
        events.add(callback)
    }

    /// The remote merges from now on.
    public func remoteMerges() -> AsyncStream<RemoteMergeEvent> { events.stream() }

    /// The last ledger token this process has merged (or skipped as its own).
    public var mergedThrough: Int64 { state.withLock { $0.cursor } }
    /// Whether a hub connection is open.
    public var isConnected: Bool { state.withLock { $0.client?.isActive ?? false } }
    /// Whether this process serves the hub.
    public var servesHub: Bool { state.withLock { $0.hub != nil } }

    // MARK: - Sending

    private func localDidSave(_ note: DidSaveNotification) {
        guard let token = note.token else { return }
        let client = state.withLock { s -> SyncClient? in
            s.lastActivity = Date()
            s.truncatedSinceActivity = false
            // This process's own transaction needs no merge: when it is the next one, the cursor
            // steps over it, so the next message from elsewhere can take the fast path.
            if token == s.cursor + 1 { s.cursor = token }
            return s.client
        }
        guard let client else { return }
        let save = Frame.DidSave(notification: note, storeUUID: storeUUID, token: token, processID: getpid())
        do {
            try client.send(.didSave(save))
        } catch {
            // Too many IDs for one frame: the others read this transaction from the ledger.
            do {
                try client.send(.tokenOnly(storeUUID: storeUUID, token: token, processID: getpid()))
            } catch {
                Self.logger.error("could not send token \(token) to the hub (\(error)); the others see it at their next ledger poll")
            }
        }
    }

    // MARK: - Receiving

    private func hint(_ frame: Frame) {
        state.withLock { $0.lastActivity = Date(); $0.truncatedSinceActivity = false }
        switch frame {
        case .didSave(let save):
            if !mergeDirectly(save) { queue.async { _ = self.catchUp() } }
        case .tokenOnly(_, let token, _):
            guard token > state.withLock({ $0.cursor }) else { return }
            queue.async { _ = self.catchUp() }
        default:
            return
        }
    }

    /// The fast path, run on the connection's thread: when the message is the very next
    /// transaction this process expects, its IDs are merged without reading the ledger (the
    /// sender sends only after its commit, so the ledger already holds it). Returns false when the
    /// ledger must be read instead: a gap, or a message from another store.
    ///
    /// The cursor moves and the merge is queued under one lock, as in ``catchUp()``, so merges
    /// reach the main queue in ledger order and each transaction is merged once.
    private func mergeDirectly(_ save: Frame.DidSave) -> Bool {
        let me = getpid()
        return state.withLock { s -> Bool in
            if s.stopped || save.token <= s.cursor { return true }  // already merged (or skipped)
            guard save.token == s.cursor + 1, save.storeUUID == storeUUID, save.processID != me else { return false }
            s.cursor = save.token
            enqueueMerge(&s, of: save.notification, token: save.token, author: save.author, processID: save.processID, committed: nil)
            return true
        }
    }

    /// Queues the merge of one transaction into the main context and the event that follows it.
    /// `committed` is the transaction's time, when known; otherwise the latency is measured from now.
    /// Called under the state lock, in ledger order. Transactions queued while a merge is already
    /// waiting for the main queue join it: a receiver that fell behind (a busy main queue, a long
    /// catch-up) merges its backlog in one pass instead of one pass per transaction, so it always
    /// catches up, and the main queue holds one merge block, not one per transaction.
    private func enqueueMerge(_ s: inout State, of note: DidSaveNotification, token: Int64, author: String?, processID: Int32, committed: Date?) {
        s.pendingMerges.append(PendingMerge(note: note, token: token, author: author, processID: processID, since: committed ?? Date()))
        guard !s.mergeScheduled else { return }
        s.mergeScheduled = true
        main.enqueue { [self] in mergePending() }
    }

    /// On the main queue: merges every pending transaction at once, then posts one event per
    /// transaction, in ledger order.
    private func mergePending() {
        let batch = state.withLock { s -> [PendingMerge] in
            defer { s.pendingMerges = []; s.mergeScheduled = false }
            return s.pendingMerges
        }
        guard !batch.isEmpty else { return }
        let combined: DidSaveNotification
        if batch.count == 1 {
            combined = batch[0].note
        } else {
            // Later transactions win: an object deleted by any of them is gone (IDs are never reused).
            var inserted = Set<ManagedObjectID>(), updated = Set<ManagedObjectID>(), deleted = Set<ManagedObjectID>()
            for pending in batch {
                inserted.formUnion(pending.note.inserted)
                updated.formUnion(pending.note.updated)
                deleted.formUnion(pending.note.deleted)
            }
            combined = DidSaveNotification(inserted: inserted.subtracting(deleted), updated: updated.subtracting(deleted), deleted: deleted,
                                           author: batch.last?.author, token: batch.last?.token)
        }
        let change = main.mergeChanges(fromContextDidSave: combined)
        let now = Date()
        for pending in batch {
            let note = pending.note
            events.post(RemoteMergeEvent(
                token: pending.token, author: pending.author, processID: pending.processID,
                inserted: note.inserted, updated: note.updated, deleted: note.deleted,
                refreshed: batch.count == 1 ? change.refreshed : change.refreshed.intersection(note.updated),
                invalidated: batch.count == 1 ? change.invalidated : change.invalidated.intersection(note.updated.union(note.deleted)),
                latency: now.timeIntervalSince(pending.since), historyExpired: false))
        }
    }

    private func poll() {
        let (connected, lastWatchdog) = state.withLock { ($0.client?.isActive ?? false, $0.lastWatchdog) }
        maintainWAL()
        // Connected: a slow watchdog (messages are hints; the ledger is the truth). Otherwise
        // every tick.
        if connected && Date().timeIntervalSince(lastWatchdog) < 2 { return }
        state.withLock { $0.lastWatchdog = Date() }
        // This tick's own writes (cursor) happen before data_version is read, so they are
        // attributed below like everyone else's.
        catchUp()
        guard (try? detector?.hasChanged()) ?? false,
              let head = try? coordinator.currentHistoryToken(),
              let cursors = try? coordinator.historyCursors() else { return }
        let ambarWrote = state.withLock { s -> Bool in
            defer { s.headAtLastCheck = head; s.cursorsAtLastCheck = cursors }
            return head != s.headAtLastCheck || cursors != s.cursorsAtLastCheck
        }
        if !ambarWrote {
            // The file changed but neither the ledger nor a cursor did: another SQLite client wrote
            // to it. (A foreign write in the same interval as an Ambar one is not told apart.)
            Self.logger.info("the store changed outside Ambar; refreshing every object")
            let main = self.main
            main.enqueue { Self.refreshAll(main) }
        }
    }

    /// Re-reads every object of the main context (on its queue); a failure is logged, since the
    /// objects may then be stale until the next change.
    private static func refreshAll(_ main: ManagedObjectContext) {
        do throws(AmbarError) {
            try main.refreshAllObjects()
        } catch {
            logger.error("refreshing the main context failed; its objects may be stale until the next change: \(error)")
        }
    }

    /// While this process serves the hub: a passive checkpoint every few seconds, and a truncating
    /// one once the store has been idle for a while, so the WAL never grows without bound.
    private func maintainWAL() {
        let (serves, lastActivity, lastCheckpoint, truncated) = state.withLock { ($0.hub != nil, $0.lastActivity, $0.lastCheckpoint, $0.truncatedSinceActivity) }
        guard serves else { return }
        let now = Date()
        if now.timeIntervalSince(lastActivity) > 10 && !truncated {
            do {
                try coordinator.checkpoint(.truncate)
                state.withLock { $0.truncatedSinceActivity = true; $0.lastCheckpoint = now }
            } catch {
                Self.logger.debug("truncating checkpoint deferred: \(error)")
            }
        } else if now.timeIntervalSince(lastCheckpoint) > 5 {
            try? coordinator.checkpoint(.passive)
            state.withLock { $0.lastCheckpoint = now }
        }
    }

    /// Reads the ledger after the cursor and merges other processes' transactions in order. Runs
    /// on `queue` only, so each transaction is merged exactly once.
    @discardableResult
    private func catchUp() -> Int {
        if state.withLock({ $0.stopped }) { return 0 }
        var merged = 0
        while true {
            let cursor = state.withLock { $0.cursor }
            let batch: [HistoryTransaction]
            do {
                batch = try coordinator.history(after: cursor, limit: 500)
            } catch .historyExpired {
                let current = (try? coordinator.currentHistoryToken()) ?? cursor
                state.withLock { $0.cursor = max($0.cursor, current) }
                Self.logger.warning("history after token \(cursor) was purged; refreshing every object")
                let main = self.main, events = self.events
                main.enqueue {
                    Self.refreshAll(main)
                    events.post(RemoteMergeEvent(token: current, author: nil, processID: 0, inserted: [], updated: [], deleted: [],
                                                 refreshed: Set(main.registeredObjects.map(\.objectID)), invalidated: [], latency: 0, historyExpired: true))
                }
                break
            } catch {
                Self.logger.error("reading the ledger failed: \(error)")
                return merged
            }
            guard let last = batch.last else { break }
            let me = getpid()
            // Under the lock, as in ``mergeDirectly(_:)``: what the fast path merged meanwhile is
            // skipped, and the queue gets every transaction in ledger order.
            state.withLock { s in
                for transaction in batch where transaction.token > s.cursor && transaction.processID != me && !transaction.isEmpty {
                    enqueueMerge(&s, of: transaction.notification, token: transaction.token, author: transaction.author,
                                 processID: transaction.processID, committed: transaction.timestamp)
                }
                s.cursor = max(s.cursor, last.token)
            }
            merged += batch.count
            if batch.count < 500 { break }
        }
        writeCursor(force: false)
        return merged
    }

    /// Records this process's ledger position in the store: when it moved (at most once a second),
    /// and once a minute anyway so that purging knows the process is alive.
    private func writeCursor(force: Bool) {
        let (cursor, last, written) = state.withLock { ($0.cursor, $0.lastCursorWrite, $0.lastCursorWritten) }
        let age = Date().timeIntervalSince(last)
        guard force || (cursor != written && age >= 1) || age >= 60 else { return }
        state.withLock { $0.lastCursorWrite = Date(); $0.lastCursorWritten = cursor }
        do {
            try coordinator.setHistoryCursor(consumer: configuration.resolvedConsumerName, token: cursor)
        } catch {
            Self.logger.debug("could not record the ledger cursor: \(error)")
        }
    }

    // MARK: - Connecting and electing the hub

    private func startConnecting() {
        let go = state.withLock { s -> Bool in
            guard !s.stopped, !s.connecting else { return false }
            s.connecting = true
            return true
        }
        guard go else { return }
        let task = Task { await self.connectLoop() }
        state.withLock { $0.connectTask = task }
    }

    private func connectLoop() async {
        defer { state.withLock { $0.connecting = false } }
        while !state.withLock({ $0.stopped }) {
            let hello = Frame.Hello(storeUUID: storeUUID, processID: getpid(), processName: ProcessInfo.processInfo.processName,
                                    cursor: state.withLock { $0.cursor })
            do {
                let client = try await SyncClient.connect(
                    socketPath: configuration.resolvedSocketPath, hello: hello, group: group,
                    maximumFrameSize: configuration.maximumFrameSize,
                    onFrame: { [weak self] frame in self?.hint(frame) },
                    onClose: { [weak self] in self?.connectionClosed() })
                let stopped = state.withLock { s -> Bool in
                    if !s.stopped { s.client = client }
                    return s.stopped
                }
                if stopped { await client.close(); return }
                Self.logger.info("connected to the hub", metadata: ["hub-pid": "\(client.welcome.hubProcessID)", "peers": "\(client.welcome.peers)"])
                queue.async { _ = self.catchUp() }
                return
            } catch SyncClient.ConnectError.refused(let code, let message) {
                Self.logger.error("the hub refused this process (\(code)): \(message)")
            } catch {
                // Nobody answers: try to become the hub (if this process may).
                if configuration.mayServeHub, await becomeHubIfFree() { continue }
            }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
    }

    private func connectionClosed() {
        let stopped = state.withLock { s -> Bool in
            s.client = nil
            return s.stopped
        }
        guard !stopped else { return }
        Self.logger.info("hub connection lost; reconnecting")
        queue.async { _ = self.catchUp() }
        startConnecting()
    }

    /// Takes the hub lock without waiting; on success serves the hub in this process.
    private func becomeHubIfFree() async -> Bool {
        if state.withLock({ $0.hub != nil || $0.stopped }) { return false }
        guard let lock = HubElectionLock.take(forSocket: configuration.resolvedSocketPath) else { return false }
        do {
            let hubConfiguration = try SyncHub.Configuration(socketPath: configuration.resolvedSocketPath, storeUUID: storeUUID, storeFile: storeFile)
            let hub = try await SyncHub.start(hubConfiguration)
            let keep = state.withLock { s -> Bool in
                guard !s.stopped else { return false }
                s.hub = hub
                s.lock = lock
                return true
            }
            if !keep {
                await hub.stop()
                return false
            }
            Self.logger.info("serving the hub in this process", metadata: ["socket": "\(configuration.resolvedSocketPath)"])
            return true
        } catch {
            Self.logger.error("could not serve the hub: \(error)")
            return false
        }
    }
}
