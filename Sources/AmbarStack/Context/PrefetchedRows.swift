import Foundation

/// The stored rows of saved objects, read before a merge and off the merging context's queue:
/// merging a remote save with them (``ManagedObjectContext/mergeChanges(fromContextDidSave:prefetched:)``)
/// reads nothing from the store on that queue, and results controllers that load the save's
/// inserted objects while the merge is announced find them here.
///
/// Rows read after a transaction reached the ledger are at least as new as that transaction. A
/// row older than what the context already holds (the context saved the object since the read)
/// is not used: the object is read again, on the queue, as without prefetched rows.
package struct PrefetchedRows: Sendable {
    /// The rows found, by object ID.
    private(set) var rows: [ManagedObjectID: StoreRow] = [:]
    /// Every ID looked up: one without a row had been deleted when it was read.
    private(set) var requested: Set<ManagedObjectID> = []

    /// No rows.
    package init() {}

    /// Whether no ID was looked up.
    package var isEmpty: Bool { requested.isEmpty }

    /// How many IDs were looked up.
    package var count: Int { requested.count }

    init(rows: [StoreRow], requested: Set<ManagedObjectID>) {
        self.requested = requested
        self.rows.reserveCapacity(rows.count)
        for row in rows { self.rows[row.id] = row }
    }

    /// Adds rows read later than these: they are at least as new, so they replace earlier ones.
    package mutating func add(_ later: PrefetchedRows) {
        if isEmpty { self = later; return }
        requested.formUnion(later.requested)
        for id in later.requested { rows[id] = later.rows[id] }
    }

    /// The row read for `id`: `.some(nil)` when it was looked up and had been deleted, `nil` when
    /// it was not looked up.
    func lookup(_ id: ManagedObjectID) -> StoreRow?? {
        guard requested.contains(id) else { return nil }
        return .some(rows[id])
    }
}

extension PersistentStoreCoordinator {
    /// Reads the rows of `ids` now, on the caller's thread, for a merge on another queue.
    ///
    /// - Throws: ``AmbarError/storage(operation:code:message:)`` and the other errors of a read.
    package func prefetchRows(_ ids: Set<ManagedObjectID>) throws(AmbarError) -> PrefetchedRows {
        let permanent = ids.filter { !$0.isTemporaryID }
        guard !permanent.isEmpty else { return PrefetchedRows() }
        try checkUsable()
        return PrefetchedRows(rows: try store.loadRows(Array(permanent)), requested: permanent)
    }
}
