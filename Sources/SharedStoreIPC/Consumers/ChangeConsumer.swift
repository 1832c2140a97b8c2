import AmbarCore
import AmbarDataStack
import Dispatch
import Foundation
import Logging

/// A durable consumer of the ledger: it resumes after its recorded position, receives each
/// transaction in token order, and records its position in the store.
///
/// A consumer is named; its position is kept in the store under that name
/// (`HistoryCursor/isDurable`), survives restarts and crashes, and holds the ledger's history
/// back while the consumer is seen within `HistoryRetention/consumerLease`. On start it resumes
/// right after that position, so transactions committed while it was down are delivered too.
///
/// **Exactly once, for effects in the store.** ``process(reconcile:_:)`` calls your handler on a
/// context of its own and saves that context *together with the new position, in one store
/// transaction*. Killed at any point, the consumer either recorded both the effects and the
/// position, or neither, and then handles the same transactions again: each transaction's effects
/// are in the store exactly once. (The handler's context refuses a save of its own, so no effect
/// can be saved without its position.)
///
/// ```swift
/// let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
/// let alerter = try ChangeConsumer(name: "alerter", sharing: sync)
/// try await alerter.process { transaction, context in
///     for id in transaction.inserted where id.entityName == "Reading" {
///         let reading = try context.existingObject(with: id) as! Reading
///         guard reading.value > 40 else { continue }
///         let alert = try context.insert(Alert.self)
///         alert.reading = reading.uid
///     }
/// }   // runs until the task is cancelled or `alerter.stop()`
/// ```
///
/// **At least once, for effects outside the store.** ``events()`` is an `AsyncSequence`: the
/// position moves past a batch when the loop asks for the next event, that is after your loop's
/// body handled it. A crash in between delivers the batch again, so make the outside effect
/// idempotent or accept a repeat.
///
/// ```swift
/// for try await event in mailer.events() {
///     switch event {
///     case .transactions(let batch): try await sendMail(about: batch.transactions)
///     case .historyExpired(let expiry): try await resendEverythingSince(expiry)
///     }
/// }
/// ```
///
/// Other properties:
/// - Transactions of other processes only, or this process's too (``Options/includesOwnTransactions``);
///   empty maintenance markers never.
/// - Several transactions per handler call and per save (``Options/maximumBatchSize``), for
///   throughput.
/// - It reads at most one page of the ledger (``Options/pageSize`` transactions) ahead of what it
///   handled: a slow consumer never buffers without bound; it falls behind in the ledger, which
///   holds the history for it within its lease.
/// - History purged before it was processed is never skipped silently: see ``HistoryExpiry``.
/// - One copy of a consumer delivers at a time: it holds the name with an ownership lease
///   (``Options/lease``) and every save is fenced by it; another copy stands by
///   (``isStandingBy``) and takes over when the lease lapses or is released. A copy whose lease
///   was taken over ends with `AmbarError/consumerLeaseLost(consumer:holder:)`, having written
///   nothing more.
/// - It wakes when the sharing layer sees the ledger move (a doorbell, a check, a save of this
///   process) and reads the ledger every ``Options/checkInterval`` anyway.
/// - A save that collides with another process's save (a conflict, or a related object deleted
///   meanwhile) is run again from the start, on the data as it is then, up to three times.
/// - A database server out of reach while the consumer reads the ledger makes it wait and read
///   again (logged when it starts and ends); a save that fails ends ``process(reconcile:_:)`` with
///   the error, nothing of the batch written (under systemd, `Restart=on-failure` starts it again
///   and it resumes after its position).
/// - ``service(reconcile:_:)`` runs it as a swift-service-lifecycle `Service`.
///
/// The same works on SQLite and PostgreSQL.
public final class ChangeConsumer: Sendable {
    /// Where a consumer without a recorded position starts.
    public enum StartingPoint: Sendable, Hashable {
        /// After the ledger's head when it first starts: only what is committed from then on.
        case head
        /// After the oldest history the ledger still holds: everything not purged yet.
        case oldestRetained
    }

    /// How a consumer reads and delivers.
    public struct Options: Sendable {
        /// Whether transactions committed by this process are delivered too (default `false`:
        /// other processes' only). A consumer's own saves are this process's transactions.
        public var includesOwnTransactions = false
        /// The most transactions per handler call and per save (default 1).
        public var maximumBatchSize = 1
        /// Where a consumer without a recorded position starts (default ``StartingPoint/head``).
        public var startingPoint = StartingPoint.head
        /// How often the ledger is read when nothing rang (default 2 s).
        public var checkInterval: Duration = .seconds(2)
        /// How many transactions one read of the ledger takes, at most (default 500).
        public var pageSize = 500
        /// The merge policy of the handler's context (default `MergePolicy/mergeByPropertyObjectTrump`).
        public var mergePolicy = MergePolicy.mergeByPropertyObjectTrump
        /// How long the consumer's ownership lease lasts (default 5 s): one copy of a consumer
        /// delivers at a time; another copy of the same name stands by and takes over when the
        /// active copy's lease lapses (it was killed, hung or cut off), or at its next check (see
        /// ``checkInterval``; a third of the lease when shorter) when the active copy stops and
        /// releases it. The owner renews it at least every third of it.
        public var lease: Duration = .seconds(5)

        /// Options with every default.
        public init() {}
    }

    /// The consumer's name, under which its position is kept.
    public let name: String
    /// The options in use.
    public let options: Options
    /// Who this copy is when it holds the consumer's ownership lease: this process's host and
    /// PID, and when this value was made.
    public let owner: ConsumerOwner

    struct State {
        /// The position recorded in the store, as this process last read or wrote it; `nil` until loaded.
        var recorded: Int64?
        /// Where this process is: the recorded position, or past it by transactions it does not take.
        var position: Int64 = 0
        /// The last token read from the ledger (delivered, buffered or skipped).
        var readThrough: Int64 = 0
        /// Transactions read after `position` and not delivered yet (at most one page).
        var buffer: [HistoryTransaction] = []
        var lastRecordedAt: ContinuousClock.Instant?
        /// When the loop last went round (read the ledger, delivered, or woke from a wait).
        var lastProgress: ContinuousClock.Instant?
        var running = false
        var stopped = false
        /// Whether the last read of the ledger found the database server out of reach.
        var unreachable = false
        /// The ownership lease this process holds, nil while it stands by (or has not claimed).
        var ownership: ConsumerOwnership?
        /// When ``ownership`` was last taken or renewed.
        var renewedAt: ContinuousClock.Instant?
        /// The copy that holds the consumer while this one stands by.
        var standingBy: ConsumerOwnership?
        /// How many pages of the outbox ``deliverOutbox(retryDelay:maximumRetryDelay:_:)`` read.
        var outboxReads = 0
    }

    private let stack: DataStack
    let coordinator: PersistentStoreCoordinator
    let signal: LedgerSignal
    private let heartbeat: Duration
    let state = Locked(State())
    private let queue: DispatchQueue
    let clock = ContinuousClock()
    static let logger = Logger(label: "ambar.consumer")

    /// A consumer named `name` on the store that `sync` shares, woken by its doorbells.
    ///
    /// - Throws: `AmbarError/invalidArgument(_:)` for an empty name or options out of range.
    public init(name: String, sharing sync: SharedStoreSync, options: Options = Options()) throws(AmbarError) {
        guard !name.isEmpty, name.utf8.count <= 200, !name.contains(where: { $0.isNewline }) else {
            throw .invalidArgument("a consumer's name must be 1 to 200 bytes of UTF-8 on one line, not \(name.debugDescription)")
        }
        guard options.maximumBatchSize >= 1, options.pageSize >= 1, options.checkInterval > .zero else {
            throw .invalidArgument("a consumer's maximum batch size and page size must be at least 1, and its check interval positive")
        }
        guard options.lease >= .milliseconds(300), options.lease <= .seconds(86_400) else {
            throw .invalidArgument("a consumer's ownership lease must be from 0.3 s to a day, not \(options.lease)")
        }
        self.name = name
        self.options = options
        self.owner = Self.newOwner()
        self.stack = sync.stack
        self.coordinator = sync.coordinator
        self.signal = sync.ledgerSignal
        self.heartbeat = .milliseconds(Int64(min(60, sync.configuration.retention.consumerLease / 4) * 1000))
        self.queue = DispatchQueue(label: "ambar.consumer.\(name)")
    }

    /// The position recorded in the store as this process last read or wrote it (`nil` before
    /// the consumer first ran): transactions through it are done.
    public var position: Int64? { state.withLock { $0.recorded } }

    /// Whether the consumer's loop runs and went round within `interval`: it reads the ledger
    /// at least every ``Options/checkInterval`` while idle, and after each batch. A loop stuck in
    /// a handler (or not running) answers `false`: feed a watchdog with it
    /// (`SystemdNotifyService(isAlive:)` in AmbarSystemd).
    public func isProgressing(within interval: Duration) -> Bool {
        let now = clock.now
        return state.withLock { s in s.running && s.lastProgress.map { now - $0 <= interval } == true }
    }

    /// Ends ``process(reconcile:_:)`` and ``events()`` after the batch in hand (its save, if any,
    /// completes). The position is recorded first.
    public func stop() {
        state.withLock { $0.stopped = true }
        signal.ring()
    }

    // MARK: - Exactly once

    /// Delivers each transaction to `handler`, on a context of the consumer's, and saves what the
    /// handler changed together with the consumer's new position, in one store transaction; runs
    /// until ``stop()`` or the task's cancellation.
    ///
    /// With ``Options/maximumBatchSize`` above 1, the handler is called once per transaction but
    /// the changes of up to that many transactions are saved together.
    ///
    /// - Parameters:
    ///   - reconcile: Called when history the consumer had not processed was purged (see
    ///     ``HistoryExpiry``); what it changes is saved with the position moved to the ledger's
    ///     head. Without it, an expiry throws `AmbarError/historyExpired(after:purgedThrough:)`.
    ///   - handler: Reacts to one transaction. It runs on the context's queue; read and insert
    ///     with the context given, and return (the consumer saves; a `save()` of your own is
    ///     refused). Throwing ends `process` with that error: nothing of the batch is saved, and
    ///     the next start delivers it again.
    /// - Throws: The handler's error, `AmbarError` from the store,
    ///   `AmbarError/invalidArgument(_:)` when this consumer is already running in this process,
    ///   `AmbarError/consumerLeaseLost(consumer:holder:)` when another copy took the consumer over,
    ///   or `AmbarError/positionAheadOfLedger(consumer:position:head:)` when the store was put
    ///   back to an earlier state by other means than Ambar's restore.
    public func process(
        reconcile: (@Sendable (HistoryExpiry, ManagedObjectContext) throws -> Void)? = nil,
        _ handler: @escaping @Sendable (HistoryTransaction, ManagedObjectContext) throws -> Void
    ) async throws {
        try await processBatches(reconcile: reconcile) { batch, context in
            for transaction in batch.transactions { try handler(transaction, context) }
        }
    }

    /// Like ``process(reconcile:_:)``, with one handler call per batch of up to
    /// ``Options/maximumBatchSize`` transactions.
    public func processBatches(
        reconcile: (@Sendable (HistoryExpiry, ManagedObjectContext) throws -> Void)? = nil,
        _ handler: @escaping @Sendable (ChangeBatch, ManagedObjectContext) throws -> Void
    ) async throws {
        try beginRunning()
        defer { endRunning() }
        let context = try stack.importerContext()
        context.consumer = name
        context.mergePolicy = options.mergePolicy
        context.transactionAuthor = "consumer:\(name)"
        do {
            try await deliver(in: context, reconcile: reconcile, handler)
        } catch {
            await releaseOwnership()
            throw error
        }
    }

    /// ``processBatches(reconcile:_:)``'s loop.
    private func deliver(
        in context: ManagedObjectContext, reconcile: (@Sendable (HistoryExpiry, ManagedObjectContext) throws -> Void)?,
        _ handler: @escaping @Sendable (ChangeBatch, ManagedObjectContext) throws -> Void
    ) async throws {
        while let delivery = try await nextDelivery() {
            switch delivery {
            case .transactions(let batch):
                try await apply(in: context, movingTo: batch.through) { try handler(batch, context) }
            case .historyExpired(let expiry):
                guard let reconcile else {
                    Self.logger.error(
                        "history this consumer had not processed was purged and it has no reconcile step",
                        metadata: ["consumer": "\(name)", "position": "\(expiry.position)", "purged-through": "\(expiry.purgedThrough)"])
                    throw AmbarError.historyExpired(after: expiry.position, purgedThrough: expiry.purgedThrough)
                }
                Self.logger.warning(
                    "history this consumer had not processed was purged; reconciling from the data",
                    metadata: ["consumer": "\(name)", "position": "\(expiry.position)", "purged-through": "\(expiry.purgedThrough)", "head": "\(expiry.head)"])
                try await apply(in: context, movingTo: expiry.head) { try reconcile(expiry, context) }
            }
        }
    }

    /// How many times a batch is run again when its save collides with another save (a conflict,
    /// a dangling reference, a uniqueness clash), before the error ends the loop.
    static let attemptsPerBatch = 3

    /// Runs `body` on the context's queue and saves its changes with the position moved to
    /// `token`; on any failure the context is reset and nothing is recorded. A save refused
    /// because another save changed what the handler read (its objects, their relationships) is
    /// run again from the start, on the data as it is now, up to ``attemptsPerBatch`` times.
    private func apply(in context: ManagedObjectContext, movingTo token: Int64, _ body: @escaping @Sendable () throws -> Void) async throws {
        let expected = state.withLock { $0.recorded }
        let name = self.name
        var attempt = 1
        while true {
            do {
                let ownership = try heldOwnership()
                try await context.perform { () throws in
                    defer { Self.reset(context) }
                    try body()
                    try context.save(movingConsumer: name, from: expected, to: token, fencedBy: ownership)
                }
                recorded(token)
                return
            } catch AmbarError.consumerPositionMoved(_, _, let found) {
                try positionMoved(to: found, expected: expected)
                return
            } catch AmbarError.consumerLeaseLost(let consumer, let holder) {
                throw leaseLost(holder: holder, consumer: consumer)
            } catch AmbarError.serverUnavailable(let server, let operation, let reason, _) {
                // The save may or may not have committed: once the server answers (and this copy
                // still holds the consumer), the batch runs again; had it committed, the
                // compare-and-set finds the position moved to `token` and nothing is done twice.
                noteUnreachable(true, detail: "\(server): \(operation): \(reason)")
                guard try await waitForTheServer() else { return }
            } catch let error as AmbarError where attempt < Self.attemptsPerBatch && Self.mayCollide(error) {
                Self.logger.notice(
                    "a consumer's save collided with another save; running the batch again on the current data",
                    metadata: ["consumer": "\(name)", "through": "\(token)", "attempt": "\(attempt)", "error": "\(error)"])
                attempt += 1
            }
        }
    }

    /// Errors a concurrent save can cause, which running the handler again on fresh data may avoid.
    private static func mayCollide(_ error: AmbarError) -> Bool {
        switch error {
        case .mergeConflict, .validation, .constraintViolation, .deleteDenied: return true
        default: return false
        }
    }

    /// Drops what the context holds (after a save, or after a failure, whose changes are discarded).
    private static func reset(_ context: ManagedObjectContext) {
        do throws(AmbarError) {
            try context.reset()
        } catch {
            logger.error("resetting a consumer's context failed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: - At least once

    /// The consumer's events as an `AsyncSequence`: batches of transactions, and history expiries.
    /// The position moves past an event when the loop asks for the next one, so every event is
    /// handled at least once (again after a crash before that). The sequence ends at ``stop()``
    /// or when the task is cancelled. Iterating it throws the store's errors, and
    /// `AmbarError/invalidArgument(_:)` while this consumer already runs in this process.
    public func events() -> ConsumerEvents { ConsumerEvents(consumer: self) }

    /// Records `token` as the position (the event before it was handled).
    func acknowledge(through token: Int64) async throws(AmbarError) {
        let expected = state.withLock { $0.recorded }
        while true {
            let ownership = try heldOwnership()
            do {
                try await onQueue { [coordinator, name] () throws(AmbarError) in
                    try coordinator.moveConsumer(name, from: expected, to: token, fencedBy: ownership)
                }
                recorded(token)
                return
            } catch .consumerPositionMoved(_, _, let found) {
                try positionMoved(to: found, expected: expected)
                return
            } catch .consumerLeaseLost(let consumer, let holder) {
                throw leaseLost(holder: holder, consumer: consumer)
            } catch .serverUnavailable(let server, let operation, let reason, _) {
                // As for a save: move it again once the server answers (a move that committed
                // is found by the compare-and-set).
                noteUnreachable(true, detail: "\(server): \(operation): \(reason)")
                guard try await waitForTheServer() else { return }
            }
        }
    }

    /// After a write the server did not answer: waits a check interval, then renews (or stands
    /// by for) the consumer's lease, which also waits while the server stays out of reach.
    /// Returns false when the consumer was stopped meanwhile.
    ///
    /// - Throws: ``AmbarError/consumerLeaseLost(consumer:holder:)`` when another copy took the
    ///   consumer meanwhile.
    private func waitForTheServer() async throws(AmbarError) -> Bool {
        await signal.wait(after: signal.rings, timeout: options.checkInterval)
        // holdOwnership throws when the lease this copy held is another's, or in another epoch.
        return try await holdOwnership()
    }

    // MARK: - Delivery

    /// The next batch or expiry; `nil` once stopped or cancelled. Waits while there is nothing.
    func nextDelivery() async throws(AmbarError) -> ConsumerEvent? {
        guard try await holdOwnership() else {
            await releaseOwnership()
            return nil
        }
        try await loadPosition()
        while true {
            let now = clock.now
            state.withLock { $0.lastProgress = now }
            if Task.isCancelled || state.withLock({ $0.stopped }) {
                try await recordSkipped()
                await releaseOwnership()
                return nil
            }
            // Before each delivery: still this copy's (renewed at least every third of the lease).
            guard try await holdOwnership() else { continue }
            if let batch = takeBatch() { return .transactions(batch) }
            let rings = signal.rings
            let readThrough = state.withLock { $0.readThrough }
            let page: [HistoryTransaction]
            do {
                page = try await onQueue { [coordinator, options] () throws(AmbarError) in
                    try coordinator.history(after: readThrough, limit: options.pageSize)
                }
            } catch .historyExpired(_, let purgedThrough) {
                let head = try await onQueue { [coordinator] () throws(AmbarError) in try coordinator.currentHistoryToken() }
                state.withLock { $0.readThrough = head }
                return .historyExpired(HistoryExpiry(consumer: name, position: readThrough, purgedThrough: purgedThrough, head: head))
            } catch .serverUnavailable(let server, let operation, let reason, _) {
                // A database server out of reach for a while: wait and read again, rather than end
                // the consumer; logged when it starts and when reading works again.
                noteUnreachable(true, detail: "\(server): \(operation): \(reason)")
                await signal.wait(after: rings, timeout: options.checkInterval)
                continue
            }
            noteUnreachable(false, detail: "")
            if let last = page.last {
                state.withLock { s in
                    s.buffer += page
                    s.readThrough = last.token
                }
                continue
            }
            // Nothing after the position: it must not be past the head (a store put back to an
            // earlier state by other means), where waiting would take reused tokens for new ones.
            let head = try await onQueue { [coordinator] () throws(AmbarError) in try coordinator.currentHistoryToken() }
            if head < readThrough {
                Self.logger.error(
                    "the consumer's position is past the ledger's head: the store was put back to an earlier state",
                    metadata: ["consumer": "\(name)", "position": "\(readThrough)", "head": "\(head)"])
                await releaseOwnership()
                throw .positionAheadOfLedger(consumer: name, position: readThrough, head: head)
            }
            try await recordSkipped()
            await signal.wait(after: rings, timeout: min(options.checkInterval, renewalInterval))
        }
    }

    /// Takes the next batch from the buffer, or moves the position over the transactions it does
    /// not take; `nil` when the buffer holds nothing to deliver.
    private func takeBatch() -> ChangeBatch? {
        state.withLock { s -> ChangeBatch? in
            var taken: [HistoryTransaction] = []
            var consumed = 0
            for transaction in s.buffer {
                if taken.count == options.maximumBatchSize { break }
                consumed += 1
                if takes(transaction) { taken.append(transaction) }
            }
            guard consumed > 0 else { return nil }
            let through = s.buffer[consumed - 1].token
            s.buffer.removeFirst(consumed)
            if taken.isEmpty {
                s.position = through
                return nil
            }
            return ChangeBatch(transactions: taken, through: through)
        }
    }

    private func takes(_ transaction: HistoryTransaction) -> Bool {
        !transaction.isEmpty && (options.includesOwnTransactions || !transaction.isFromThisProcess)
    }

    /// Reads the recorded position once per run (creating it at the starting point when there
    /// is none) and starts reading after it.
    private func loadPosition() async throws(AmbarError) {
        guard state.withLock({ $0.recorded == nil }) else { return }
        let name = self.name
        let (existing, start) = try await onQueue { [coordinator, options] () throws(AmbarError) -> (HistoryCursor?, Int64) in
            let existing = try coordinator.historyCursor(consumer: name)
            switch options.startingPoint {
            case .head: return (existing, try coordinator.currentHistoryToken())
            case .oldestRetained: return (existing, try coordinator.historySummary().purgedThrough)
            }
        }
        if let existing {
            if let lease = existing.lease { throw .consumerNameTaken(consumer: name, lease: lease) }
            recorded(existing.token)
            Self.logger.info("consumer resumes after its recorded position", metadata: ["consumer": "\(name)", "position": "\(existing.token)"])
            return
        }
        let ownership = try heldOwnership()
        do {
            try await onQueue { [coordinator] () throws(AmbarError) in try coordinator.moveConsumer(name, from: nil, to: start, fencedBy: ownership) }
            recorded(start)
            Self.logger.info("consumer starts", metadata: ["consumer": "\(name)", "position": "\(start)", "starting-point": "\(options.startingPoint)"])
        } catch .consumerPositionMoved(_, _, let found) {
            try positionMoved(to: found, expected: nil)
        }
    }

    /// Records the position when it moved over transactions the consumer does not take, or when
    /// the heartbeat is due (so that purging knows the consumer is alive).
    private func recordSkipped() async throws(AmbarError) {
        let now = clock.now
        let (expected, position, due) = state.withLock { s -> (Int64?, Int64, Bool) in
            let age = s.lastRecordedAt.map { now - $0 } ?? .seconds(Int64.max / 4)
            let due = s.recorded != nil && ((s.position != s.recorded && age >= .seconds(1)) || age >= heartbeat)
            return (s.recorded, s.position, due)
        }
        guard due, let expected else { return }
        try await acknowledge(through: max(position, expected))
    }

    /// Logs when reading the ledger starts failing because the server is out of reach, and when
    /// it works again.
    func noteUnreachable(_ now: Bool, detail: String) {
        let changed = state.withLock { s -> Bool in
            defer { s.unreachable = now }
            return s.unreachable != now
        }
        guard changed else { return }
        if now {
            Self.logger.warning(
                "the database server did not answer (out of reach, or a row another session locks past the statement timeout); the consumer tries again at every check",
                metadata: ["consumer": "\(name)", "error": "\(detail)"])
        } else {
            Self.logger.notice("the database server answers again; the consumer continues", metadata: ["consumer": "\(name)"])
        }
    }

    private func recorded(_ token: Int64) {
        let now = clock.now
        state.withLock { s in
            s.recorded = token
            s.position = max(s.position, token)
            if s.readThrough < token {
                s.readThrough = token
                s.buffer = []
            }
            s.lastRecordedAt = now
        }
    }

    /// Another process moved the position (or it was removed): continue from where it is now.
    private func positionMoved(to found: Int64?, expected: Int64?) throws(AmbarError) {
        guard let found else {
            Self.logger.error("the consumer's position was removed while it ran; stopping", metadata: ["consumer": "\(name)"])
            throw .consumerPositionMoved(consumer: name, expected: expected, found: nil)
        }
        // A refusal that found the position where this process expected it is no move: going on
        // from there would be refused again, for ever.
        guard found != expected else {
            Self.logger.error("the consumer's position was refused where it stood; stopping", metadata: ["consumer": "\(name)", "position": "\(found)"])
            throw .consumerPositionMoved(consumer: name, expected: expected, found: found)
        }
        Self.logger.notice(
            "another process moved this consumer's position; continuing from there",
            metadata: ["consumer": "\(name)", "expected": "\(expected.map(String.init) ?? "none")", "found": "\(found)"])
        state.withLock { s in
            s.recorded = found
            s.position = found
            s.readThrough = found
            s.buffer = []
        }
    }

    // MARK: - Running

    /// Marks the consumer running in this process (once at a time) and starts reading after its
    /// recorded position.
    func beginRunning() throws(AmbarError) {
        try state.withLock { s throws(AmbarError) in
            guard !s.running else {
                throw .invalidArgument("consumer '\(name)' is already running in this process; run one loop per consumer")
            }
            s.running = true
            s.lastProgress = clock.now
            s.stopped = false
            s.recorded = nil
            s.position = 0
            s.readThrough = 0
            s.buffer = []
            s.ownership = nil
            s.standingBy = nil
        }
    }

    func endRunning() {
        state.withLock { $0.running = false }
    }

    /// Runs a store call on the consumer's queue, off the caller's thread (store calls block).
    func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws(AmbarError) -> T) async throws(AmbarError) -> T {
        let result: Result<T, AmbarError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result(catching: { () throws(AmbarError) -> T in try body() })) }
        }
        return try result.get()
    }
}
