import Foundation

/// The narrow interface between contexts and a storage backend.
///
/// Everything a backend does — its SQL, its schema, its transactions — stays behind this protocol,
/// so a second backend (PostgreSQL) is an addition, not a rewrite. Implementations are
/// thread-safe; every method is synchronous and runs on the caller's queue. Each write method
/// runs in one transaction that either commits whole or leaves the store unchanged.
package protocol PersistentStore: AnyObject, Sendable {
    /// The store's UUID, part of every permanent object ID.
    var identifier: String { get }
    /// The model the store holds.
    var model: ManagedObjectModel { get }
    /// Where the store lives (a file path, or a description for in-memory stores).
    var location: String { get }

    /// Rows matching `query`, with their values.
    func fetchRows(_ query: StoreQuery) throws(AmbarError) -> [StoreRow]
    /// Hands each row matching `query` to `body` as it is read, in order, inside one read: the
    /// caller builds its objects while the row is still in the cache, and no array of rows is
    /// made. `body` must not call the store. Each row is handed over (`consuming`): the caller
    /// keeps its parts without copying them.
    func forEachRow(_ query: StoreQuery, _ body: (consuming StoreRow) -> Void) throws(AmbarError)
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

    /// The IDs of the objects each query selects and the token of the ledger's head, in one read
    /// transaction: the IDs are those of exactly the transactions up to that token.
    func fetchIDsAtHistoryHead(_ queries: [StoreQuery]) throws(AmbarError) -> (ids: [[ManagedObjectID]], token: Int64)
    /// The token of the last committed transaction (0 when none).
    func currentHistoryToken() throws(AmbarError) -> Int64
    /// The transactions after `token`, in order; throws ``AmbarError/historyExpired(after:purgedThrough:)``
    /// when they were purged.
    func history(after token: Int64, limit: Int?) throws(AmbarError) -> [HistoryTransaction]
    /// The transactions after `token` (at most `limit`) and the rows of the objects `select`
    /// names for them (nil: none), in one read transaction where the backend can.
    ///
    /// `expecting` names rows the caller expects `select` to name (from a doorbell's claim, which
    /// the ledger has not confirmed yet): a backend for which each statement is a round trip
    /// reads them in the same statement as the page, and reads again only what `select` names
    /// beyond them. Rows read for IDs that `select` does not name are left out.
    func ledgerPage(
        after token: Int64, limit: Int, expecting: Set<ManagedObjectID>, rowsOf select: ([HistoryTransaction]) -> Set<ManagedObjectID>?
    ) throws(AmbarError) -> LedgerPage
    /// Records a position: a durable consumer's (`lease == nil`), or a sharing process's merge
    /// position that holds history back for `lease` seconds. `lockWait` bounds how long the write
    /// waits for another connection's lock (nil: as long as the store's other writes do). Returns
    /// false, having written nothing, when the lock was not free within `lockWait`.
    @discardableResult
    func setHistoryCursor(_ consumer: String, token: Int64, lease: TimeInterval?, lockWait: TimeInterval?) throws(AmbarError) -> Bool
    /// Every consumer's position.
    func historyCursors() throws(AmbarError) -> [HistoryCursor]
    /// Takes `consumer`'s ownership lease for `owner` until `lease` seconds from now (the store's
    /// clock) when nobody holds it or its holder's lease has lapsed (the epoch grows by one), or
    /// renews it when `owner` holds it already (the epoch stays); else reports the holder.
    func claimConsumer(_ consumer: String, owner: ConsumerOwner, lease: TimeInterval) throws(AmbarError) -> ConsumerClaim
    /// Gives up `consumer`'s ownership lease when `owner` holds it (it lapses now; the record,
    /// and so the epoch, is kept); another copy may take it at once. Removes `owner`'s standby
    /// record, if any. Returns whether it held the lease.
    @discardableResult
    func releaseConsumer(_ consumer: String, owner: ConsumerOwner) throws(AmbarError) -> Bool
    /// Every consumer's ownership, lapsed or not.
    func consumerOwnerships() throws(AmbarError) -> [ConsumerOwnership]
    /// The copies of durable consumers standing by whose record has not lapsed. A
    /// ``claimConsumer(_:owner:lease:)`` that finds the consumer held records its caller as one
    /// (until now + `lease`); one that takes it, and a ``releaseConsumer(_:owner:)``, remove the
    /// caller's record.
    func consumerStandbys() throws(AmbarError) -> [ConsumerStandby]
    /// `consumer`'s outbox messages not sent yet, oldest first, at most `limit`.
    func outboxMessages(consumer: String, limit: Int) throws(AmbarError) -> [OutboxMessage]
    /// How many of `consumer`'s outbox messages are not sent yet.
    func outboxCount(consumer: String) throws(AmbarError) -> Int
    /// Removes a sent outbox message (the row with its id and key); returns whether it was there.
    @discardableResult
    func removeOutboxMessage(_ message: OutboxMessage) throws(AmbarError) -> Bool
    /// Records a failed attempt to send an outbox message: one more attempt, `error`, and not
    /// before `until`.
    func deferOutboxMessage(_ message: OutboxMessage, error: String, until: Date) throws(AmbarError)
    /// Forgets a consumer; `lockWait` as for ``setHistoryCursor(_:token:lease:lockWait:)``.
    @discardableResult
    func removeHistoryCursor(_ consumer: String, lockWait: TimeInterval?) throws(AmbarError) -> Bool
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

    /// Throws ``AmbarError/storeReplaced(path:)`` when the store at its location is no longer
    /// the one this value opened (a file replaced or removed); a no-op where that cannot happen.
    func verifyIdentity() throws(AmbarError)
}

extension PersistentStore {
    /// Reads every row first, then hands them over: for backends that do not stream.
    package func forEachRow(_ query: StoreQuery, _ body: (consuming StoreRow) -> Void) throws(AmbarError) {
        for row in try fetchRows(query) { body(row) }
    }

    package func serverStatus() throws(AmbarError) -> StoreServerStatus? { nil }
    package func verifyIdentity() throws(AmbarError) {}
    package func ledgerPage(
        after token: Int64, limit: Int, expecting: Set<ManagedObjectID>, rowsOf select: ([HistoryTransaction]) -> Set<ManagedObjectID>?
    ) throws(AmbarError) -> LedgerPage {
        try ledgerPageInTwoReads(after: token, limit: limit, rowsOf: select)
    }

    /// ``ledgerPage(after:limit:rowsOf:)`` as two reads: the page, then the rows.
    package func ledgerPageInTwoReads(
        after token: Int64, limit: Int, rowsOf select: ([HistoryTransaction]) -> Set<ManagedObjectID>?
    ) throws(AmbarError) -> LedgerPage {
        let transactions = try history(after: token, limit: limit)
        guard let ids = select(transactions) else { return LedgerPage(transactions: transactions, rows: nil) }
        return LedgerPage(transactions: transactions, rows: try loadRows(Array(ids)))
    }
}
