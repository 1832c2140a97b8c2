import AmbarCore
import AmbarDataStack
import Dispatch
import Foundation
import Logging

/// Keeps a stack's main context in step with every other process of its shared directory.
///
/// After each commit of this process the saved object IDs go to the hub, which relays them to the
/// other processes. A message is only a doorbell: each process reads the ledger in the store and
/// merges the other processes' transactions into its main context in ledger order, each exactly
/// once — so a lost, forged or replayed message, a dead or frozen hub or a restart only delays a
/// merge. When no hub answers, one process takes the hub lock and serves the hub itself (and the
/// store's upkeep: ledger retention, WAL checkpoints); while none is reachable, everyone polls the
/// ledger.
///
/// ```swift
/// let stack = try DataStack.open(model: .model(model), storeURL: directory.appendingPathComponent("shared.sqlite"))
/// let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
/// let merges = sync.observeRemoteMerges { event in
///     print("token \(event.token) from pid \(event.processID): \(event.updated.count) updated")
/// }
/// // …
/// merges.cancel()
/// await sync.stop()
/// ```
///
/// It is made of parts that each own their state: a `LedgerFollower` (cursor, reads, merges,
/// doorbell checks), a `HubConnection` (connect, election, backoff), a `ForeignWriteWatchdog`
/// and a ``StoreMaintenance``.
public final class SharedStoreSync: Sendable {
    /// The configuration in use.
    public let configuration: SharingConfiguration
    let stack: DataStack
    private let main: ManagedObjectContext
    let coordinator: PersistentStoreCoordinator
    /// Rung whenever this process sees the ledger move: consumers wait on it.
    let ledgerSignal = LedgerSignal()
    private let storeUUID: UUID
    /// This process's ID, read once (each `getpid()` is a system call) for the frames it sends.
    private let processID = getpid()
    private let follower: LedgerFollower
    private let connection: HubConnection
    private let watchdog: ForeignWriteWatchdog?
    private let maintenance: StoreMaintenance
    private let queue = DispatchQueue(label: "ambar.sync")
    /// Where doorbells are followed (the ledger read): off the hub connection's event loop, which
    /// must not block, and apart from ``queue``, whose upkeep may wait for SQLite's write lock.
    private let doorbells = DispatchQueue(label: "ambar.sync.doorbells", qos: .userInitiated)
    private let events = ObserverList<RemoteMergeEvent>()
    private let observations = Locked<[ContextObservation]>([])
    /// Who runs the loops (the hub connection's, the ledger poll): ``run()`` as child tasks, or
    /// the task ``start(stack:configuration:)`` made for them.
    private let loops = Locked(Loops.notStarted)
    private let lastLedgerCheck = Locked<ContinuousClock.Instant?>(nil)
    private let checks = Locked(0)
    private let clock = ContinuousClock()
    private let ending = SharingFailure()
    /// The shared-memory bell, when this process could map it.
    private let bell: Locked<SharedMemoryBell?>
    private let bellProblemState = Locked<String?>(nil)

    /// Who runs sharing's loops.
    private enum Loops {
        /// Prepared (``init(stack:configuration:)``): ``run()`` will run them.
        case notStarted
        /// In `task`: started with ``start(stack:configuration:)`` or its `readyStack` variant.
        case inTask(Task<Void, Never>)
        /// As child tasks of ``run()``.
        case inRun
        /// Stopped, or ended for good.
        case ended
    }
    static let logger = Logger(label: "ambar.sync")

    private init(stack: DataStack, configuration: SharingConfiguration) throws {
        let storeDescription = stack.storeDescription
        if case .inMemory = storeDescription {
            throw SharingError.notShareable("an in-memory store cannot be shared between processes")
        }
        try configuration.retention.validate()
        self.stack = stack
        self.configuration = configuration
        let main = try stack.mainContext
        let coordinator = try stack.writerCoordinator
        self.main = main
        self.coordinator = coordinator
        guard let uuid = UUID(uuidString: coordinator.storeIdentifier) else {
            throw SharingError.notShareable("the store's UUID \(coordinator.storeIdentifier) is not valid")
        }
        self.storeUUID = uuid
        self.watchdog = try ForeignWriteWatchdog(coordinator: coordinator)  // nil for a store on a server
        self.maintenance = StoreMaintenance(coordinator: coordinator, retention: configuration.retention)
        let follower = LedgerFollower(
            coordinator: coordinator, main: main, positionName: configuration.resolvedMergePositionName,
            lease: configuration.retention.effectiveProcessLease,
            readsRowsAhead: configuration.readsChangedRowsAhead, events: events, signal: ledgerSignal)
        self.follower = follower
        let bell = Locked<SharedMemoryBell?>(nil)
        self.bell = bell
        let storeIdentifier = coordinator.storeIdentifier
        var storeFile: URL? = nil
        if case .sqlite(let url) = storeDescription { storeFile = url }
        let isOnServer = storeFile == nil
        let refreshAll: @Sendable () -> Void = {
            Self.logger.debug("the store changed outside Ambar; refreshing every object")
            main.enqueue { LedgerFollower.refreshAll(main) }
        }
        self.connection = try HubConnection(
            configuration: configuration, storeUUID: uuid, storeFile: storeFile,
            cursor: { follower.cursor },
            bell: { bell.withLock { $0 }?.use },
            makeServerDoorbell: { hub in
                ServerDoorbell(
                    store: storeDescription, storeUUID: uuid, storeIdentifier: storeIdentifier, hub: hub,
                    head: { try coordinator.currentHistoryToken() })
            },
            onFrame: { [doorbells] frame in
                if case .foreignWrite(let store) = frame, store == uuid {
                    // Only the hub of a store on a database server reports foreign writes (each
                    // process watches an SQLite file itself): anywhere else it is not believed.
                    guard isOnServer else { return follower.rejectForeignWrite() }
                    refreshAll()
                    doorbells.async { follower.follow() }
                    return
                }
                guard let doorbell = Self.doorbell(from: frame, storeUUID: uuid, storeIdentifier: storeIdentifier) else { return }
                doorbells.async { follower.ring(doorbell) }
            },
            onConnected: { [queue] in queue.async { follower.follow() } },
            onDisconnected: { [queue] in queue.async { follower.follow() } })
    }

    /// Starts sharing `stack` (which must be ready) with the other processes of the directory.
    ///
    /// Objects its main context already holds are re-read once (results controllers refetch), so
    /// whatever was committed between their loading and this call is not missed.
    public static func start(stack: DataStack, configuration: SharingConfiguration) async throws -> SharedStoreSync {
        try await stack.load()
        return try start(readyStack: stack, configuration: configuration)
    }

    /// Starts sharing `stack`, which is ready already (opened with `DataStack.open`, or loaded),
    /// without suspending: for code that cannot `await`, such as an initializer.
    ///
    /// ```swift
    /// let stack = try DataStack.open(model: .model(model), storeURL: directory.appendingPathComponent("ambar.sqlite"))
    /// let sync = try SharedStoreSync.start(readyStack: stack, configuration: .sharedDirectory(directory))
    /// ```
    ///
    /// - Throws: `AmbarError/stackNotReady` when the stack's setup has not finished, and what
    ///   ``start(stack:configuration:)`` throws.
    public static func start(readyStack stack: DataStack, configuration: SharingConfiguration) throws -> SharedStoreSync {
        guard stack.isReady else { throw AmbarError.stackNotReady }
        let sync = try SharedStoreSync(stack: stack, configuration: configuration)
        try sync.begin()
        sync.launch()
        return sync
    }

    /// Shares `stack` (which must be ready) from now on, and leaves the loops that keep it in
    /// step (the hub connection, the ledger poll) to ``run()``, which runs them as its child
    /// tasks: for a `ServiceGroup`, which then owns all of sharing's work.
    ///
    /// ```swift
    /// let sync = try SharedStoreSync(sharing: stack, configuration: .sharedDirectory(directory))
    /// let group = ServiceGroup(services: [sync, consumer.service(handle)], gracefulShutdownSignals: [.sigterm], logger: logger)
    /// try await group.run()
    /// ```
    ///
    /// Saves are announced, and the stack's main context re-read once, from the moment it
    /// returns; other processes' transactions are merged once `run()` runs.
    ///
    /// - Throws: `AmbarError/stackNotReady` when the stack's setup has not finished, and what
    ///   ``start(stack:configuration:)`` throws.
    public convenience init(sharing stack: DataStack, configuration: SharingConfiguration) throws {
        guard stack.isReady else { throw AmbarError.stackNotReady }
        try self.init(stack: stack, configuration: configuration)
        try begin()
    }

    /// Why a stack cannot be shared.
    public enum SharingError: Error, Sendable, CustomStringConvertible {
        /// The stack's store cannot be shared, for the reason given.
        case notShareable(String)
        public var description: String {
            switch self {
            case .notShareable(let reason): return "cannot share the store: \(reason)"
            }
        }
    }

    private func begin() throws {
        let socketDirectory = URL(fileURLWithPath: configuration.resolvedSocketPath).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: socketDirectory, withIntermediateDirectories: true)
        follower.start(at: try coordinator.currentHistoryToken())
        checkBell(startingUp: true)  // maps the bell and starts waiting on it
        // What the main context loaded before now may predate the start: re-read it once (results
        // controllers refetch), so a commit between that load and this start is not missed.
        let mainContext = self.main
        mainContext.enqueue { if mainContext.registeredObjectCount > 0 { LedgerFollower.refreshAll(mainContext) } }
        // Every root save of this process goes out: on the writer coordinator and, when separate,
        // on the main one.
        let main = try stack.mainCoordinator
        let locals = main === coordinator ? [coordinator] : [main, coordinator]
        let list = locals.map { local in local.observeDidSave { [weak self] note in self?.localDidSave(note) } }
        observations.withLock { $0 = list }
    }

    /// Runs the loops in a task of their own (which ``stop()`` cancels and waits for): what
    /// ``start(stack:configuration:)`` does, for code that does not run sharing as a service.
    private func launch() {
        loops.withLock { loops in
            guard case .notStarted = loops else { return }
            loops = .inTask(Task { await self.runLoops() })
        }
    }

    /// Whether the caller is to run the loops (as ``run()`` does, for an instance made with
    /// ``init(sharing:configuration:)``); false when they run already or sharing stopped.
    func takeLoops() -> Bool {
        loops.withLock { loops in
            guard case .notStarted = loops else { return false }
            loops = .inRun
            return true
        }
    }

    /// Sharing's work while it runs, as child tasks of the calling task: the hub connection
    /// (connect, serve the hub when none answers, reconnect) and the ledger poll (the store's
    /// identity, upkeep, the bell, the position, a ledger check when due). Returns when the
    /// calling task is cancelled, or when sharing ends for good; in that case it also stops the
    /// hub connection, so that the new store's processes take the hub over.
    func runLoops() async {
        let connection = self.connection
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await connection.run() }
            group.addTask { await self.pollLedger() }
            // The connection's loop ends when cancelled or stopped; the poll also when sharing
            // ends for good.
            await group.next()
            group.cancelAll()
        }
        if ending.error != nil { await connection.stop() }
    }

    /// Whether ``stop()`` was called.
    private var isStopped: Bool {
        loops.withLock { loops in
            if case .ended = loops { return true }
            return false
        }
    }

    /// Checks the ledger every poll interval (``tick()``, on ``queue``) until cancelled, stopped
    /// or ended for good.
    private func pollLedger() async {
        let interval = Duration.seconds(configuration.pollInterval)
        while ending.error == nil && !isStopped {
            // Sleeps throw only when the task is cancelled (stop()), which ends the loop.
            do { try await Task.sleep(for: interval) } catch { return }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                queue.async {
                    // stop() marks sharing stopped before it stops the follower on this queue.
                    if !self.isStopped { self.tick() }
                    done.resume()
                }
            }
        }
    }

    /// Stops sharing: closes the hub connection (never waiting on a hub that does not answer),
    /// stops serving the hub if this process did, removes this process's merge position from the
    /// store (waiting at most a second for the write lock; if another connection holds it longer,
    /// the position is left to purging, with a warning), and ends the streams of
    /// ``remoteMerges()``.
    ///
    /// Call it before the process exits, or when the stack is no longer shared:
    ///
    /// ```swift
    /// let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
    /// // … the process runs …
    /// await sync.stop()   // where it shuts down (a service's graceful shutdown, for example)
    /// ```
    ///
    /// A process that exits without it loses nothing: the ledger is the truth, the hub notices
    /// the closed socket, and if this process served the hub, another one that may serve it
    /// takes over. Its per-process cursor
    /// then stays in the store until the retention's consumer lease expires. After `stop()`,
    /// saves of this process are no longer announced and other processes' are no longer merged.
    /// Calling it twice does nothing more.
    public func stop() async {
        let running = loops.withLock { loops -> Task<Void, Never>? in
            defer { loops = .ended }
            if case .inTask(let task) = loops { return task }
            return nil
        }
        running?.cancel()
        await running?.value
        observations.withLock { list in
            list.forEach { $0.cancel() }
            list = []
        }
        bell.withLock { $0 }?.stop()
        await connection.stop()
        queue.sync { follower.stop() }
        events.finishStreams()
        ending.finish()
    }

    // MARK: - Ending for good

    /// Why sharing ended for good, if it did: `AmbarError.storeReplaced(path:)` once the file
    /// at the store's path is no longer the store this process opened (a backup restored with
    /// `mv` or `sync-agent restore`, the file removed). Sharing then stops merging and serving
    /// the hub (the new store's processes take it over), and every write of this stack throws
    /// the same error: open the store again — for a service, exit non-zero so that the service
    /// manager restarts it (run as a `Service`, sharing does so by throwing from `run()`).
    public var failure: AmbarError? { ending.error }

    /// Waits until sharing ends for good and returns why (see ``failure``); nil when sharing is
    /// stopped first (``stop()``) or the waiting task is cancelled.
    ///
    /// ```swift
    /// if let failure = await sync.waitForFailure() {
    ///     logger.critical("\(failure)")
    ///     exit(1)   // systemd restarts the service, which opens the store now at the path
    /// }
    /// ```
    public func waitForFailure() async -> AmbarError? { await ending.wait() }

    /// Ends sharing for good with `error` (once): no more merges, no more hub.
    private func end(_ error: AmbarError) {
        guard ending.fail(error) else { return }
        Self.logger.critical("\(error) Sharing stopped: nothing more is merged or announced.")
        // The loops see the failure and end (``tick()`` runs on their poll), stopping the hub
        // connection as they go: the hub goes, for the new store's processes.
    }

    // MARK: - Reading your writes

    /// Waits until this process's main context holds transaction `token` (and every one before
    /// it): another process's merged into it, this process's own merged from the saving context.
    /// Reads the ledger at once, so a token learned before its doorbell arrived is not waited for
    /// in vain.
    ///
    /// Read your writes across processes: the process that saved hands its
    /// `ManagedObjectContext.lastSavedToken` to this one (in a reply, a message), and this one
    /// waits for it before it reads the main context.
    ///
    /// ```swift
    /// try await sync.waitUntilMerged(token: reply.token, timeout: .seconds(5))
    /// let order = try await stack.mainContext.perform { ... }   // sees what that save wrote
    /// ```
    ///
    /// - Throws: `AmbarError.notMergedYet(token:heldThrough:waited:)` when it did
    ///   not within `timeout` (a token of another store, a save that has not committed, sharing
    ///   stopped meanwhile), `AmbarError.invalidArgument(_:)` for a token below 1 or
    ///   a timeout that is not positive, and the failure that ended sharing, if one did.
    public func waitUntilMerged(token: Int64, timeout: Duration = .seconds(10)) async throws(AmbarError) {
        guard token > 0 else { throw .invalidArgument("a ledger token is 1 or more, not \(token)") }
        guard timeout > .zero else { throw .invalidArgument("the timeout must be positive, not \(timeout)") }
        if let failure = ending.error { throw failure }
        let follower = self.follower
        if follower.heldThrough < token {
            queue.async { follower.follow() }
            let started = ContinuousClock.now
            guard await follower.waitUntilMerged(token, timeout: timeout) else {
                if let failure = ending.error { throw failure }
                let waited = ContinuousClock.now - started
                let seconds = Double(waited.components.seconds) + Double(waited.components.attoseconds) / 1e18
                throw .notMergedYet(token: token, heldThrough: follower.heldThrough, waited: (seconds * 100).rounded() / 100)
            }
        }
        // What the main queue was given before now runs first: the merges of this process's own
        // saves from its other contexts.
        await main.perform {}
    }

    // MARK: - Observing

    /// Calls `callback` after each remote transaction was merged into the main context (on the
    /// main queue). Every event describes a transaction the ledger holds.
    public func observeRemoteMerges(_ callback: @escaping @Sendable (RemoteMergeEvent) -> Void) -> ContextObservation {
        events.add(callback)
    }

    /// The remote merges from now on, as an async sequence: one event per transaction of
    /// another process, in ledger order, each after its changes were merged into the main
    /// context. The stream ends when sharing stops (``stop()``) or when the loop stops
    /// iterating; events are buffered until the loop takes them.
    ///
    /// ```swift
    /// for await merge in sync.remoteMerges() {
    ///     print("transaction \(merge.token) from pid \(merge.processID): \(merge.inserted.count) inserted")
    /// }
    /// ```
    ///
    /// The main context's objects are already up to date when an event arrives; read them on the
    /// main queue.
    public func remoteMerges() -> AsyncStream<RemoteMergeEvent> { events.stream() }

    /// The last ledger token this process has read and given to its main context to merge (or
    /// skipped as its own); the merge itself runs when the main queue next runs.
    /// ``waitUntilMerged(token:timeout:)`` waits until it is done.
    public var mergedThrough: Int64 { follower.cursor }
    /// Whether a hub connection is open.
    public var isConnected: Bool { connection.isConnected }
    /// Whether this process serves the hub.
    public var servesHub: Bool { connection.servesHub }
    /// Whether this process holds its host's `LISTEN` on the database server (it serves the hub
    /// of a store on a server, and the listening connection is up).
    public var isListeningToServer: Bool { connection.serverDoorbellState == .listening }
    /// How many hub messages disagreed with the ledger (forged, stale or replayed) and were
    /// ignored since sharing started. The ledger's transactions were merged regardless.
    public var rejectedMessages: Int { follower.rejectedDoorbells }
    /// How many periodic checks of the ledger and of the store file (for writes made outside
    /// Ambar) ran since sharing started: one every poll interval while no hub answers, every
    /// ``SharingConfiguration/ledgerCheckInterval`` while connected.
    public var ledgerChecks: Int { checks.withLock { $0 } }
    /// What the last purge of the ledger removed, when this process serves the hub and purged.
    public var lastPurge: HistoryPurge? { maintenance.lastPurge }

    /// Applies `retention` to the purges this process makes while it serves the hub (a reloaded
    /// configuration). The consumer heartbeat keeps the lease given at start.
    ///
    /// - Throws: `AmbarError.invalidArgument` for a retention that is not positive.
    public func setRetention(_ retention: HistoryRetention) throws(AmbarError) {
        try maintenance.setRetention(retention)
    }

    // MARK: - Sending

    private func localDidSave(_ note: DidSaveNotification) {
        guard let token = note.token else { return }
        follower.ownTransactionCommitted(token: token)
        ledgerSignal.ring()
        // The committing thread only raises the bell (two atomic operations) and hands the rest
        // to the hub connection's event loop in one task: the wake of every sleeping process (one
        // system call whose cost grows with them), then the hub frame, built and written there.
        // The commit makes one wake-up (the loop's), not one per process, and builds no frame.
        // Without a connection, the same runs here.
        let raised = bell.withLock { $0 }.flatMap { $0.raise(token: token) ? $0 : nil }
        let announce: @Sendable () -> Void = { [connection, storeUUID, processID] in
            Self.announce(note, token: token, wakingFrom: raised, connection: connection, storeUUID: storeUUID, processID: processID)
        }
        if !connection.runOnConnectionLoop(announce) { announce() }
    }

    /// Wakes the processes waiting on `bell` (when the commit raised it), then sends the save's
    /// hub frame; run by the hub connection's event loop, or by the committing thread without
    /// a connection.
    private static func announce(
        _ note: DidSaveNotification, token: Int64, wakingFrom bell: SharedMemoryBell?, connection: HubConnection, storeUUID: UUID,
        processID: Int32
    ) {
        func sendTokenOnly() {
            do {
                try connection.send(.tokenOnly(storeUUID: storeUUID, token: token, processID: processID, instanceID: ProcessInstance.id))
            } catch {
                logger.error("could not send token \(token) to the hub (\(error)); the others see it at their next ledger check")
            }
        }
        if let bell, !bell.wake() {
            // So that the hub relays this process's frames to everyone: a new hello, on which
            // this save is announced again (the frame below goes to the closed connection, whose
            // hub left it to the bell, or waits for the next one).
            connection.reconnect()
            sendTokenOnly()
        }
        do {
            try connection.send(.didSave(Frame.DidSave(notification: note, storeUUID: storeUUID, token: token, processID: processID)))
        } catch {
            // Too many IDs for one frame: the others read this transaction from the ledger.
            sendTokenOnly()
        }
    }

    /// The doorbell a hub frame rings, or `nil` for frames that ring none (or name another store).
    static func doorbell(from frame: Frame, storeUUID: UUID, storeIdentifier: String) -> Doorbell? {
        switch frame {
        case .didSave(let save) where save.storeUUID == storeUUID:
            return Doorbell(token: save.token, instanceID: save.instanceID, claim: save.notification(inStore: storeIdentifier))
        case .tokenOnly(let uuid, let token, _, let instance) where uuid == storeUUID:
            // The hub's own catch-up hint names no instance (0).
            return Doorbell(token: token, instanceID: instance == 0 ? nil : instance, claim: nil)
        default:
            return nil
        }
    }

    // MARK: - Checking

    /// Every poll interval, on `queue`: the store's upkeep when this process serves the hub; the
    /// ledger read (each tick while no hub answers, every ``SharingConfiguration/ledgerCheckInterval``
    /// while connected); and the foreign-write watchdog.
    private func tick() {
        guard ending.error == nil else { return }
        do {
            try coordinator.verifyStoreIdentity()
        } catch {
            if case .storeReplaced = error { return end(error) }
            // Not a verdict on the file: the ledger check below reports what cannot be read.
        }
        if connection.servesHub { maintenance.runDue() }
        checkBell()
        follower.recordPosition(force: false)
        let now = clock.now
        let due = lastLedgerCheck.withLock { last -> Bool in
            if connection.isConnected, let last, now - last < configuration.ledgerCheckInterval { return false }
            last = now
            return true
        }
        guard due else { return }
        if follower.follow() {
            SharingMetrics.checksFindingMissedWork.increment()
        } else {
            follower.checkHeadNotBehindCursor()
        }
        if watchdog?.foreignWriteHappened() == true {
            Self.logger.debug("the store changed outside Ambar; refreshing every object")
            let main = self.main
            main.enqueue { LedgerFollower.refreshAll(main) }
        }
        checks.withLock { $0 += 1 }
    }

    // MARK: - The bell

    /// What the bell's waiting thread does on each ring: a doorbell with only a token.
    private var ringFromBell: @Sendable (Int64) -> Void {
        { [follower] token in
            SharingMetrics.bellRingsReceived.increment()
            follower.ring(Doorbell(token: token, instanceID: nil, claim: nil))
        }
    }

    /// Maps the bell and waits on it: at the start (`startingUp`, making the folders above it),
    /// again when the file at its path is another one (removed, replaced), and at each check
    /// while it cannot be mapped; those later mappings never make the shared directory again
    /// once it is gone. Why the bell cannot be used fully is kept in ``bellProblem`` and logged
    /// when it changes.
    private func checkBell(startingUp: Bool = false) {
        let current = bell.withLock { $0 }
        if let current, current.isStillAtPath { return }
        let path = SharedMemoryBell.path(in: configuration.directory, storeUUID: storeUUID)
        let problem: String?
        do {
            let fresh = try SharedMemoryBell(path: path, makingDirectories: startingUp)
            current?.stop()
            bell.withLock { $0 = fresh }
            fresh.startWaiting(onRing: ringFromBell, onFailure: { [connection] in connection.reconnect() })
            // A ring may have gone to the old file meanwhile.
            if current != nil { follower.follow() }
            // The hub relays by the bell each process uses: tell it this one's.
            connection.reconnect()
            problem = fresh.canRing ? nil : Self.readOnlyBell(path)
        } catch {
            problem = "the shared-memory bell cannot be used; doorbells go through the hub alone: \(error)"
        }
        let changed = bellProblemState.withLock { old -> Bool in
            defer { old = problem }
            return old != problem
        }
        if changed, let problem { Self.logger.warning("\(problem)") }
    }

    /// What ``bellProblem`` says when the bell could only be opened for reading.
    private static func readOnlyBell(_ path: String) -> String {
        "the shared-memory bell \(path) could only be opened for reading: this process is woken by the others' commits, and its own reach them through the hub"
    }

    /// How many rings of the shared-memory bell this process has seen (each one made it read the
    /// ledger, unless it had already merged the token rung). The bell is
    /// `<directory>/.ambar/bell-<store UUID>`: a committing process wakes the others through it
    /// directly, before its hub frame is relayed.
    public var bellRingsReceived: Int { bell.withLock { $0 }?.ringsReceived ?? 0 }

    /// How many of ``bellRingsReceived`` no wake reached: seen only when the bell thread's wait
    /// slice ran out (for the tests: a ring's wake that never came).
    package var bellRingsFoundAtTimeout: Int { bell.withLock { $0 }?.ringsFoundAtTimeout ?? 0 }

    /// Why this process cannot use the shared-memory bell fully (its doorbells then go through the
    /// hub: all of them, or, when it could only open the bell for reading, those of its own
    /// commits), or nil when it can.
    public var bellProblem: String? { bellProblemState.withLock { $0 } }
}
