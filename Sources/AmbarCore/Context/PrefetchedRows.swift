import Foundation

/// The stored rows of saved objects, read before a merge and off the merging context's queue:
/// merging a remote save with them (``ManagedObjectContext/mergeChanges(fromContextDidSave:prefetched:)``)
/// reads nothing from the store on that queue, and results controllers that load the save's
/// inserted objects while the merge is announced find them here.
///
/// Rows read after a transaction reached the ledger are at least as new as that transaction, and
/// they reflect every transaction up to the token they are read through. They are not used for
/// what may be newer in the context: an object it holds at a later version, or one that a save
/// merged since the read touched (see `MergedSaveLog`); such objects are read again, on the
/// queue, as without prefetched rows.
package struct PrefetchedRows: Sendable {
    /// The rows found, by object ID.
    private(set) var rows: [ManagedObjectID: StoreRow] = [:]
    /// Every ID looked up: one without a row had been deleted when it was read.
    private(set) var requested: Set<ManagedObjectID> = []
    /// The ledger token the rows were read through: every transaction up to it had committed
    /// before they were read.
    private(set) var readThrough: Int64 = 0

    /// No rows.
    package init() {}

    /// Whether no ID was looked up.
    package var isEmpty: Bool { requested.isEmpty }

    /// How many IDs were looked up.
    package var count: Int { requested.count }

    init(rows: [StoreRow], requested: Set<ManagedObjectID>, readThrough: Int64) {
        self.requested = requested
        self.readThrough = readThrough
        self.rows.reserveCapacity(rows.count)
        for row in rows { self.rows[row.id] = row }
    }

    /// Adds rows read later than these: they are at least as new, so they replace earlier ones.
    /// The earlier rows stay read through the earlier token.
    package mutating func add(_ later: PrefetchedRows) {
        if isEmpty {
            self = later
            return
        }
        if later.isEmpty { return }
        requested.formUnion(later.requested)
        for id in later.requested { rows[id] = later.rows[id] }
        readThrough = min(readThrough, later.readThrough)
    }

    /// Forgets the rows of `ids`: they are read from the store when needed.
    mutating func remove(_ ids: Set<ManagedObjectID>) {
        guard !ids.isEmpty, !requested.isEmpty else { return }
        let gone = ids.count < requested.count ? ids.intersection(requested) : requested.intersection(ids)
        requested.subtract(gone)
        for id in gone { rows.removeValue(forKey: id) }
    }

    /// The row read for `id`: `.some(nil)` when it was looked up and had been deleted, `nil` when
    /// it was not looked up.
    func lookup(_ id: ManagedObjectID) -> StoreRow?? {
        guard requested.contains(id) else { return nil }
        return .some(rows[id])
    }
}

extension PersistentStoreCoordinator {
    /// Reads the ledger after `token` (at most `limit` transactions) and, in the same read
    /// transaction where the backend can (SQLite: on a connection of its own), the rows of the
    /// objects `select` names for them, on the caller's thread, for a merge on another queue.
    /// `expecting` names the rows the caller expects `select` to name (a doorbell's claim): a
    /// server store reads them in the page's own statement, one round trip for both.
    ///
    /// - Throws: ``AmbarError/historyExpired(after:purgedThrough:)`` when those transactions were
    ///   purged, and the errors of a read.
    package func ledgerPage(
        after token: Int64, limit: Int, expecting: Set<ManagedObjectID> = [], rowsOf select: ([HistoryTransaction]) -> Set<ManagedObjectID>?
    ) throws(AmbarError) -> (transactions: [HistoryTransaction], rows: PrefetchedRows) {
        try checkUsable()
        var requested = Set<ManagedObjectID>()
        let page = try store.ledgerPage(after: token, limit: limit, expecting: expecting.filter { !$0.isTemporaryID }) { transactions in
            guard let ids = select(transactions)?.filter({ !$0.isTemporaryID }), !ids.isEmpty else { return nil }
            requested = ids
            return ids
        }
        guard let rows = page.rows else { return (page.transactions, PrefetchedRows()) }
        return (page.transactions, PrefetchedRows(rows: rows, requested: requested, readThrough: page.transactions.last?.token ?? token))
    }

    /// Reads the rows of `ids` now, on the caller's thread, for a merge on another queue.
    ///
    /// - Parameter readThrough: a ledger token every transaction up to which had committed before
    ///   this call (the last token of a ledger page read before it).
    /// - Throws: ``AmbarError/storage(operation:code:message:cause:)`` and the other errors of a read.
    package func prefetchRows(_ ids: Set<ManagedObjectID>, readThrough: Int64) throws(AmbarError) -> PrefetchedRows {
        let permanent = ids.filter { !$0.isTemporaryID }
        guard !permanent.isEmpty else { return PrefetchedRows() }
        try checkUsable()
        return PrefetchedRows(rows: try store.loadRows(Array(permanent)), requested: permanent, readThrough: readThrough)
    }
}
