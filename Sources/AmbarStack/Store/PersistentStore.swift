import Foundation

/// The narrow interface between contexts and a storage backend.
///
/// Everything a backend does — its SQL, its schema, its transactions — stays behind this protocol,
/// so a second backend (PostgreSQL) is an addition, not a rewrite. Implementations are
/// thread-safe; every method is synchronous and runs on the caller's queue. Each write method
/// runs in one transaction that either commits whole or leaves the store unchanged.
protocol PersistentStore: AnyObject, Sendable {
    /// The store's UUID, part of every permanent object ID.
    var identifier: String { get }
    /// The model the store holds.
    var model: ManagedObjectModel { get }
    /// Where the store lives (a file path, or a description for in-memory stores).
    var location: String { get }

    /// Rows matching `query`, with their values.
    func fetchRows(_ query: StoreQuery) throws(AmbarError) -> [StoreRow]
    /// IDs of the objects matching `query`, in order.
    func fetchIDs(_ query: StoreQuery) throws(AmbarError) -> [ManagedObjectID]
    /// The number of objects matching `query`.
    func count(_ query: StoreQuery) throws(AmbarError) -> Int
    /// Chosen attribute values of the matching objects, optionally distinct.
    func fetchValues(_ query: StoreQuery, properties: [String], distinct: Bool) throws(AmbarError) -> [[String: AttributeValue]]
    /// The rows for `ids` that still exist (missing ones are omitted).
    func loadRows(_ ids: [ManagedObjectID]) throws(AmbarError) -> [StoreRow]
    /// The destinations of a to-many relationship of `owner`, as stored.
    func loadToMany(_ owner: ManagedObjectID, _ relationship: ResolvedRelationship) throws(AmbarError) -> [ManagedObjectID]
    /// Reserves `count` primary keys for new objects of `entity`.
    func allocatePrimaryKeys(entity: String, count: Int) throws(AmbarError) -> [Int64]
    /// Applies a context's changes in one transaction, resolving conflicts by the change set's
    /// merge policy.
    func save(_ changes: ChangeSet) throws(AmbarError) -> SaveOutcome
    /// Inserts rows without a context; returns their IDs and the ledger token.
    func batchInsert(entity: String, rows: [[String: AttributeValue]], author: String?) throws(AmbarError) -> (ids: [ManagedObjectID], token: Int64?)
    /// Sets attributes on every matching object; returns the IDs changed and the ledger token.
    func batchUpdate(_ query: StoreQuery, values: [String: AttributeValue], author: String?) throws(AmbarError) -> (ids: [ManagedObjectID], token: Int64?)
    /// Deletes every matching object; returns the IDs deleted and the ledger token.
    func batchDelete(_ query: StoreQuery, author: String?) throws(AmbarError) -> (ids: [ManagedObjectID], token: Int64?)
    /// Closes every connection; later calls fail.
    func close()
    /// Moves committed changes from the log into the main file (a no-op where that means nothing).
    func checkpoint(_ mode: CheckpointMode) throws(AmbarError)
    /// Appends a transaction without changes to the ledger (maintenance that other processes must
    /// be able to attribute to Ambar); returns its token.
    func recordMarker(contextName: String) throws(AmbarError) -> Int64
    /// Runs the backend's consistency check; returns the problems found (empty when sound).
    func integrityCheck() throws(AmbarError) -> [String]
    /// Copies the whole store, consistent as of one moment, to a new file at `url`.
    func backup(to url: URL) throws(AmbarError)

    /// The token of the last committed transaction (0 when none).
    func currentHistoryToken() throws(AmbarError) -> Int64
    /// The transactions after `token`, in order; throws ``AmbarError/historyExpired(after:purgedThrough:)``
    /// when they were purged.
    func history(after token: Int64, limit: Int?) throws(AmbarError) -> [HistoryTransaction]
    /// Records a consumer's position.
    func setHistoryCursor(_ consumer: String, token: Int64) throws(AmbarError)
    /// Every consumer's position.
    func historyCursors() throws(AmbarError) -> [HistoryCursor]
    /// Forgets a consumer.
    func removeHistoryCursor(_ consumer: String) throws(AmbarError)
    /// Purges transactions up to `token`, but never past a consumer seen within `lease`; returns the
    /// token purged through.
    func purgeHistory(through token: Int64, lease: TimeInterval) throws(AmbarError) -> Int64
    /// Applies a retention at `now`: removes aged transactions (never past a live consumer),
    /// consumers gone longer than the lease, and expired receipts.
    func purgeHistory(_ retention: HistoryRetention, now: Date) throws(AmbarError) -> HistoryPurge
    /// The ledger's oldest and head tokens and its size.
    func historySummary() throws(AmbarError) -> HistorySummary

    /// The token of the save committed with idempotency key `key`, or `nil` if none was.
    func savedToken(forIdempotencyKey key: String) throws(AmbarError) -> Int64?

    /// The database server's state, for a store on a server (`nil` for a file).
    func serverStatus() throws(AmbarError) -> StoreServerStatus?
}

extension PersistentStore {
    func serverStatus() throws(AmbarError) -> StoreServerStatus? { nil }
}

/// What to read: an entity, a predicate, an order and a window.
struct StoreQuery: Sendable {
    var entity: String
    var predicate: ObjectPredicate?
    var sortDescriptors: [ObjectSortDescriptor] = []
    var limit: Int?
    var offset: Int = 0
    var includesSubentities = true
}

/// One object's stored state.
struct StoreRow: Sendable {
    let id: ManagedObjectID
    let version: Int64
    /// Values in the entity layout's attribute order.
    let values: [AttributeValue]
    /// To-one destinations by relationship index (to-many slots are nil).
    let toOne: [ManagedObjectID?]
}

/// An object to insert.
struct InsertChange: Sendable {
    var id: ManagedObjectID
    let values: [AttributeValue]
    let toOne: [ManagedObjectID?]
}

/// An object to update, with what the context had read and what it changed.
struct UpdateChange: Sendable {
    let id: ManagedObjectID
    /// The names of every changed property (attributes and relationships), for the ledger.
    var changedNames: [String] = []
    let expectedVersion: Int64
    let snapshot: [AttributeValue]
    let values: [AttributeValue]
    let changedAttributes: [Int]
    let snapshotToOne: [ManagedObjectID?]
    let toOne: [ManagedObjectID?]
    let changedToOne: [Int]
}

/// An object to delete.
struct DeleteChange: Sendable {
    let id: ManagedObjectID
    let expectedVersion: Int64
}

/// A row to add to or remove from a join table, oriented from `owner` through its relationship.
struct JoinChange: Sendable, Hashable {
    let owner: ManagedObjectID
    let relationship: String
    let destination: ManagedObjectID
    let isInsert: Bool
}

/// The order of an ordered relationship of `owner`, as it is after the save.
struct OrderChange: Sendable, Hashable {
    let owner: ManagedObjectID
    let relationship: String
    let destinations: [ManagedObjectID]
}

/// Everything one context save writes.
struct ChangeSet: Sendable {
    var inserts: [InsertChange] = []
    var updates: [UpdateChange] = []
    var deletes: [DeleteChange] = []
    var joins: [JoinChange] = []
    var orders: [OrderChange] = []
    var mergePolicy: MergePolicy = .error
    var author: String?
    var contextName: String?
    /// Recorded with the transaction; a second save with the same key is refused.
    var idempotencyKey: String?
    var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && joins.isEmpty && orders.isEmpty }
}

/// What a save did, for the context to bring its objects in step.
struct SaveOutcome: Sendable {
    /// Temporary (or constraint-merged) IDs and the permanent IDs they became.
    var permanentIDs: [ManagedObjectID: ManagedObjectID] = [:]
    /// New row versions of inserted and updated objects, by permanent ID.
    var versions: [ManagedObjectID: Int64] = [:]
    /// Objects whose in-memory state must become the stored row (conflict resolution).
    var refreshed: [ManagedObjectID: StoreRow] = [:]
    /// Updated objects whose rows were deleted by someone else (the update was dropped).
    var vanished: Set<ManagedObjectID> = []
    /// Deletes the rollback policy discarded (the object stays, refreshed).
    var discardedDeletes: Set<ManagedObjectID> = []
    /// The IDs written, as notifications report them.
    var inserted: Set<ManagedObjectID> = []
    var updated: Set<ManagedObjectID> = []
    var deleted: Set<ManagedObjectID> = []
    /// The ledger token of the transaction, when anything was written.
    var token: Int64?
}
