import Foundation
import Synchronization

/// Identifies a coordinator; `Sendable`, so notifications can carry it.
public struct CoordinatorIdentifier: Sendable, Hashable, CustomStringConvertible {
    let raw: UInt64
    private static let counter = Atomic<UInt64>(0)
    static func next() -> CoordinatorIdentifier { CoordinatorIdentifier(raw: counter.add(1, ordering: .relaxed).newValue) }
    public var description: String { "coordinator#\(raw)" }
}

/// Where a coordinator keeps its store.
public enum StoreDescription: Sendable, Hashable {
    /// An SQLite file (WAL mode), created if missing. Several coordinators, in this process or
    /// others, may open the same file.
    case sqlite(URL)
    /// A store in memory: nothing is written to disk, and it is gone with the coordinator.
    case inMemory
    /// A store in a database on a server, shared by processes on several hosts. Made by a backend
    /// module: `import AmbarPostgres`, then `.postgres(URL(string: "postgres://…")!)`.
    case server(ServerStoreDescription)
}

/// A store in a database on a server (PostgreSQL), as a backend module describes it.
///
/// Two descriptions are equal when they name the same server, database and user; the password
/// is never part of the description's text.
public struct ServerStoreDescription: Sendable, Hashable, CustomStringConvertible {
    /// The server and database, without credentials (`postgres://ambar@db.example:5432/ambar`).
    public let location: String
    package let connector: any SQLServerConnector

    /// A description over `connector` (for backend modules).
    package init(connector: any SQLServerConnector) {
        self.connector = connector
        self.location = connector.displayLocation
    }

    public var description: String { location }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.location == rhs.location }
    public func hash(into hasher: inout Hasher) { hasher.combine(location) }
}

/// Connects contexts to one store: its own connections, and its own did-save notifications.
///
/// Two coordinators on the same file are two independent connection pools, as in Core Data;
/// conflicts between them are caught by optimistic locking at save. A ``DataStack`` makes its
/// coordinators itself; make one directly for a tool or a service that wants only a context:
///
/// ```swift
/// let coordinator = try PersistentStoreCoordinator(
///     model: try ManagedObjectModel(declaring: [Project.self]),
///     store: .sqlite(directory.url.appendingPathComponent("tracker.sqlite")))
/// let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "importer")
/// let open = try context.performAndWait { () throws(AmbarError) in
///     try context.count(for: try FetchRequest<TaskItem>(format: "done == NO"))
/// }
/// ```
public final class PersistentStoreCoordinator: Sendable {
    /// The model of the store.
    public let model: ManagedObjectModel
    /// Where the store is.
    public let storeDescription: StoreDescription
    /// The coordinator's identity in notifications.
    public let identifier = CoordinatorIdentifier.next()
    /// A name for logs.
    public let name: String?
    package let store: any PersistentStore
    let didSaveObservers = ObserverList<DidSaveNotification>()
    let deleted = Atomic<Bool>(false)

    /// A coordinator over `store`, which the backend module opened for `description`
    /// (`AmbarDataStack` for a file or memory, `AmbarPostgres` for a server). Users call
    /// ``init(model:store:name:recovery:)``, which opens the store.
    package init(model: ManagedObjectModel, description: StoreDescription, name: String?, opened store: any PersistentStore) {
        self.model = model
        self.storeDescription = description
        self.name = name
        self.store = store
    }

    /// The store's UUID (the authority part of object-ID URIs).
    public var storeIdentifier: String { store.identifier }

    /// The store's location: a file path, or `:memory:`.
    public var storeLocation: String { store.location }

    /// Calls `callback` after every save of a root context on this coordinator, on the saving
    /// context's queue. Hop to your own queue before touching objects.
    public func observeDidSave(_ callback: @escaping @Sendable (DidSaveNotification) -> Void) -> ContextObservation {
        didSaveObservers.add(callback)
    }

    /// Writes an online backup of the store to a new file at `url` while this and other
    /// processes keep reading and writing: a consistent copy as of one moment (SQLite's backup
    /// API, reading one snapshot), checked with `integrity_check` before this returns. The copy
    /// is a complete store — model, ledger and all — that opens like any other.
    ///
    /// - Throws: ``AmbarError/invalidArgument(_:)`` when `url` exists (a backup never overwrites),
    ///   ``AmbarError/storage(operation:code:message:cause:)`` when the copy cannot be written; a
    ///   partial file is removed.
    public func backup(to url: URL) throws(AmbarError) {
        try checkUsable()
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw .invalidArgument("\(url.path) exists; a backup never overwrites a file — choose a new name")
        }
        try store.backup(to: url)
    }

    /// Checks the store's integrity (SQLite's `integrity_check`); returns the problems found,
    /// empty when the store is sound.
    public func integrityCheck() throws(AmbarError) -> [String] {
        try checkUsable()
        return try store.integrityCheck()
    }

    // MARK: - Change history

    /// The token of the last committed transaction in the store's ledger (0 when none).
    public func currentHistoryToken() throws(AmbarError) -> Int64 {
        try checkUsable()
        return try store.currentHistoryToken()
    }

    /// The committed transactions after `token`, in commit order (at most `limit`).
    ///
    /// ```swift
    /// var seen = try coordinator.currentHistoryToken()
    /// // … later, in this process or another:
    /// for transaction in try coordinator.history(after: seen) {
    ///     print(transaction.token, transaction.author ?? "-", transaction.inserted.count, "inserted")
    ///     seen = transaction.token
    /// }
    /// ```
    ///
    /// - Throws: ``AmbarError/historyExpired(after:purgedThrough:)`` when those transactions were
    ///   purged: refresh fully and continue from ``currentHistoryToken()``.
    public func history(after token: Int64, limit: Int? = nil) throws(AmbarError) -> [HistoryTransaction] {
        try checkUsable()
        return try store.history(after: token, limit: limit)
    }

    /// Records that `consumer` has processed the ledger through `token` (and is alive),
    /// whatever position it had.
    ///
    /// With `lease == nil` (the default) this is a durable consumer's position: it stays until
    /// removed and holds history back while recorded within ``HistoryRetention/consumerLease``.
    /// With a lease it is a sharing process's merge position, which holds history back for
    /// `lease` seconds after this call and is removed by purging after that.
    ///
    /// To move a durable consumer's position together with its work, so that the work is done
    /// exactly once, use ``ManagedObjectContext/save(movingConsumer:from:to:)`` (or
    /// ``moveConsumer(_:from:to:)`` when the work is outside the store) instead: they move it
    /// only from where it was read.
    public func setHistoryCursor(consumer: String, token: Int64, lease: TimeInterval? = nil) throws(AmbarError) {
        try checkUsable()
        if let lease, !(lease > 0 && lease.isFinite) {
            throw .invalidArgument("a position's lease must be a positive number of seconds, not \(lease)")
        }
        try store.setHistoryCursor(consumer, token: token, lease: lease, lockWait: nil)
    }

    /// Records `consumer`'s position as ``setHistoryCursor(consumer:token:lease:)`` does, waiting
    /// at most `lockWait` seconds for another connection's write lock: for bookkeeping that can be
    /// retried later, where waiting the store's full busy timeout would hold up its caller (a
    /// sharing process's merge position, written from its merge queue and at shutdown).
    ///
    /// - Returns: false, having written nothing, when the lock was not free within `lockWait`.
    package func setHistoryCursor(consumer: String, token: Int64, lease: TimeInterval, lockWait: TimeInterval) throws(AmbarError) -> Bool {
        try checkUsable()
        return try store.setHistoryCursor(consumer, token: token, lease: lease, lockWait: lockWait)
    }

    /// Claims durable consumer `consumer`'s ownership lease for `owner` (this process by
    /// default): takes it when nobody holds it or its holder's lease has lapsed, renews it when
    /// `owner` holds it; otherwise says who does. The lease lasts `lease` seconds from now by the
    /// store's clock (the server's on PostgreSQL). A claim that finds the consumer held records
    /// `owner` as standing by (``consumerStandbys()``) until then; one that takes it removes
    /// that record.
    ///
    /// ```swift
    /// switch try coordinator.claimConsumer("mailer", lease: 5) {
    /// case .owned(let ownership): print("active until \(ownership.expires)")
    /// case .heldByAnother(let ownership): print("standing by: \(ownership.owner) is active")
    /// }
    /// ```
    public func claimConsumer(_ consumer: String, owner: ConsumerOwner = .thisProcess, lease: TimeInterval) throws(AmbarError) -> ConsumerClaim {
        try checkUsable()
        guard lease > 0, lease.isFinite else { throw .invalidArgument("a consumer's ownership lease must be a positive number of seconds, not \(lease)") }
        return try store.claimConsumer(consumer, owner: owner, lease: lease)
    }

    /// Gives up `consumer`'s ownership lease when `owner` holds it, so that a copy standing by
    /// takes over at once, and removes `owner`'s standby record; returns whether `owner` held the
    /// lease.
    @discardableResult
    public func releaseConsumer(_ consumer: String, owner: ConsumerOwner = .thisProcess) throws(AmbarError) -> Bool {
        try checkUsable()
        return try store.releaseConsumer(consumer, owner: owner)
    }

    /// Who owns each durable consumer that runs with an ownership lease, lapsed or not.
    public func consumerOwnerships() throws(AmbarError) -> [ConsumerOwnership] {
        try checkUsable()
        return try store.consumerOwnerships()
    }

    /// The copies of durable consumers standing by, by consumer: each recorded when its claim
    /// found the consumer held by another copy, renewed at each of its checks, removed when it
    /// takes over or stops, and lapsed after its lease when it is gone without a word.
    public func consumerStandbys() throws(AmbarError) -> [ConsumerStandby] {
        try checkUsable()
        return try store.consumerStandbys()
    }

    /// `consumer`'s outbox messages not sent yet, oldest first, at most `limit`: what its handlers
    /// recorded with ``ManagedObjectContext/recordOutboxMessage(topic:payload:key:)``.
    ///
    /// A delivery loop sends each and then calls ``removeOutboxMessage(_:)``, or
    /// ``deferOutboxMessage(_:error:until:)`` when sending failed (`ChangeConsumer.deliverOutbox(_:)`
    /// in SharedStoreIPC is one).
    public func outboxMessages(consumer: String, limit: Int = 100) throws(AmbarError) -> [OutboxMessage] {
        try checkUsable()
        return try store.outboxMessages(consumer: consumer, limit: max(1, limit))
    }

    /// How many of `consumer`'s outbox messages are not sent yet (counted, not read: cheap for a
    /// backlog of any size).
    ///
    /// ```swift
    /// let waiting = try coordinator.outboxCount(consumer: "mailer")
    /// ```
    public func outboxCount(consumer: String) throws(AmbarError) -> Int {
        try checkUsable()
        return try store.outboxCount(consumer: consumer)
    }

    /// Removes `message` from the outbox, once it was sent; returns whether it was there (a copy
    /// of the consumer on another host may have sent and removed it first). Only the row with
    /// its id and key goes, never a message recorded since under a reused id.
    @discardableResult
    public func removeOutboxMessage(_ message: OutboxMessage) throws(AmbarError) -> Bool {
        try checkUsable()
        return try store.removeOutboxMessage(message)
    }

    /// Records that sending `message` failed with `error`: its attempts grow by one and it is not
    /// sent again before `until`.
    public func deferOutboxMessage(_ message: OutboxMessage, error: String, until: Date) throws(AmbarError) {
        try checkUsable()
        try store.deferOutboxMessage(message, error: error, until: until)
    }

    /// Moves durable consumer `consumer`'s position from `expected` (`nil`: not recorded yet) to
    /// `token`, in a transaction of its own, and records that it is alive.
    ///
    /// The move happens only if the position is still `expected`, so two processes running the
    /// same consumer cannot both move it past the same transactions. Use it for a consumer whose
    /// work is outside the store, after the work is done (at least once); for work in the store
    /// use ``ManagedObjectContext/save(movingConsumer:from:to:)``, which moves it in the work's own
    /// transaction (exactly once).
    ///
    /// ```swift
    /// var position = try coordinator.historyCursor(consumer: "mailer")?.token
    /// for transaction in try coordinator.history(after: position ?? 0, limit: 100) {
    ///     try sendMail(about: transaction)           // your work, outside the store
    ///     try coordinator.moveConsumer("mailer", from: position, to: transaction.token)
    ///     position = transaction.token
    /// }
    /// ```
    ///
    /// - Throws: ``AmbarError/consumerPositionMoved(consumer:expected:found:)`` when the position
    ///   is not `expected` (nothing was written), or a storage error.
    public func moveConsumer(_ consumer: String, from expected: Int64?, to token: Int64) throws(AmbarError) {
        try move(ConsumerMove(consumer: consumer, expected: expected, token: token))
    }

    /// Moves the position like ``moveConsumer(_:from:to:)``, only while `ownership` (from
    /// ``claimConsumer(_:owner:lease:)``) is still the consumer's.
    ///
    /// - Throws: ``AmbarError/consumerLeaseLost(consumer:holder:)`` when another process owns the
    ///   consumer now (nothing is written), and what ``moveConsumer(_:from:to:)`` throws.
    public func moveConsumer(_ consumer: String, from expected: Int64?, to token: Int64, fencedBy ownership: ConsumerOwnership) throws(AmbarError) {
        try move(try ConsumerMove(consumer: consumer, expected: expected, token: token, fencedBy: ownership))
    }

    /// Writes `move` in a transaction of its own.
    package func move(_ move: ConsumerMove) throws(AmbarError) {
        try checkUsable()
        var changes = ChangeSet()
        changes.consumerMove = move
        _ = try store.save(changes)
    }

    /// The recorded position of `consumer`, or `nil` when none is.
    public func historyCursor(consumer: String) throws(AmbarError) -> HistoryCursor? {
        try historyCursors().first { $0.consumer == consumer }
    }

    /// The ledger token of the save committed with idempotency key `key`
    /// (``ManagedObjectContext/save(idempotencyKey:)``), or `nil` if none was.
    public func savedToken(forIdempotencyKey key: String) throws(AmbarError) -> Int64? {
        try checkUsable()
        return try store.savedToken(forIdempotencyKey: key)
    }

    /// Every recorded position: durable consumers' and sharing processes' (``HistoryCursor/isDurable``).
    public func historyCursors() throws(AmbarError) -> [HistoryCursor] {
        try checkUsable()
        return try store.historyCursors()
    }

    /// Forgets `consumer`'s position: it no longer holds back purging, and a durable consumer of
    /// that name starts afresh (a running one finds its position gone at its next move:
    /// ``AmbarError/consumerPositionMoved(consumer:expected:found:)`` with `found == nil`).
    public func removeHistoryCursor(consumer: String) throws(AmbarError) {
        try checkUsable()
        try store.removeHistoryCursor(consumer, lockWait: nil)
    }

    /// Forgets `consumer`'s position as ``removeHistoryCursor(consumer:)`` does, waiting at most
    /// `lockWait` seconds for another connection's write lock (see
    /// ``setHistoryCursor(consumer:token:lease:lockWait:)``).
    ///
    /// - Returns: false, having removed nothing, when the lock was not free within `lockWait`.
    package func removeHistoryCursor(consumer: String, lockWait: TimeInterval) throws(AmbarError) -> Bool {
        try checkUsable()
        return try store.removeHistoryCursor(consumer, lockWait: lockWait)
    }

    /// Purges ledger transactions through `token`, but never past the position of a consumer seen
    /// within `lease` (default one day; a sharing process's merge position counts within its own
    /// lease, when shorter). Returns the token the ledger is now purged through.
    @discardableResult
    public func purgeHistory(through token: Int64, lease: TimeInterval = 86_400) throws(AmbarError) -> Int64 {
        try checkUsable()
        return try store.purgeHistory(through: token, lease: lease)
    }

    /// Applies `retention` as of `now`: removes ledger transactions older than its history
    /// retention (never one that a durable consumer seen within the consumer lease, or a sharing
    /// process seen within its process lease, still needs), the merge positions of sharing
    /// processes gone longer than their lease, and receipts older than its receipt retention.
    /// Durable consumers' positions stay until removed (``removeHistoryCursor(consumer:)``).
    ///
    /// The process serving the hub runs this on a schedule (``HistoryRetention``); call it
    /// yourself only for a store no such process serves.
    ///
    /// - Throws: ``AmbarError/invalidArgument(_:)`` for a retention that is not positive, or the
    ///   storage error that stopped the purge (nothing was removed then).
    @discardableResult
    public func purgeHistory(_ retention: HistoryRetention, now: Date = Date()) throws(AmbarError) -> HistoryPurge {
        try checkUsable()
        try retention.validate()
        return try store.purgeHistory(retention, now: now)
    }

    /// The ledger at a glance: its oldest and head tokens and how many transactions it holds.
    public func historySummary() throws(AmbarError) -> HistorySummary {
        try checkUsable()
        return try store.historySummary()
    }

    /// The database server's state, for a store on a server; `nil` for an SQLite file.
    public func serverStatus() throws(AmbarError) -> StoreServerStatus? {
        try checkUsable()
        return try store.serverStatus()
    }

    /// Checks that the file at the store's path is still the store this coordinator opened.
    ///
    /// A store file replaced under a running process (a backup restored with `mv`, the file
    /// removed and made again) would otherwise go on receiving writes no one will ever read:
    /// every write checks this itself (and throws ``AmbarError/storeReplaced(path:)``, writing
    /// nothing); call it where a process must know before it acts on the store's say-so — after
    /// a save, before deleting what the save replaces. Sharing (SharedStoreIPC) checks it at every
    /// ledger check and stops. A no-op for a store on a database server.
    ///
    /// ```swift
    /// try context.save()
    /// try coordinator.verifyStoreIdentity()   // the save is in the store at the path
    /// try FileManager.default.removeItem(at: inputFile)
    /// ```
    ///
    /// - Throws: ``AmbarError/storeReplaced(path:)`` when it is not.
    public func verifyStoreIdentity() throws(AmbarError) {
        try checkUsable()
        try store.verifyIdentity()
    }

    /// The managed-object ID for a URI of this store.
    ///
    /// - Throws: ``AmbarError/invalidObjectID(_:)`` when the URI is malformed, names another store
    ///   or an entity the model does not have.
    public func managedObjectID(forURIRepresentation uri: URL) throws(AmbarError) -> ManagedObjectID {
        let id = try ManagedObjectID(uri: uri)
        try validate(id)
        return id
    }

    func validate(_ id: ManagedObjectID) throws(AmbarError) {
        guard model.resolved.entities[id.entityName] != nil else {
            throw .invalidObjectID("entity '\(id.entityName)' of \(id.uriString) is not in the model")
        }
        guard id.isTemporaryID || id.storeIdentifier == store.identifier else {
            throw .invalidObjectID("\(id.uriString) belongs to store \(id.storeIdentifier), not \(store.identifier)")
        }
    }

    /// Marks the store deleted (later saves and fetches throw ``AmbarError/storeDeleted``) and
    /// closes its connections.
    package func markDeletedAndClose() {
        guard !deleted.exchange(true, ordering: .acquiringAndReleasing) else { return }
        store.close()
    }

    package func checkUsable() throws(AmbarError) {
        if deleted.load(ordering: .acquiring) { throw .storeDeleted }
    }
}
