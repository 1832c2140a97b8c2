import Foundation

/// What a save did, for the context to bring its objects in step.
package struct SaveOutcome: Sendable {
    /// Temporary (or constraint-merged) IDs and the permanent IDs they became.
    package var permanentIDs: [ManagedObjectID: ManagedObjectID] = [:]
    /// The ID of each insert of the change set, in its order: the permanent ID it became (its
    /// own if it had one, or the ID of the row a uniqueness merge made it). The context reads
    /// its inserted objects' IDs from here, in step, instead of hashing each in `permanentIDs`.
    package var insertedIDs: [ManagedObjectID] = []
    /// New row versions of updated objects (and of inserts that became an existing row), by
    /// permanent ID. An inserted row not listed is at version 1.
    package var versions: [ManagedObjectID: Int64] = [:]
    /// Objects whose in-memory state must become the stored row (conflict resolution).
    package var refreshed: [ManagedObjectID: StoreRow] = [:]
    /// Updated objects whose rows were deleted by someone else (the update was dropped).
    package var vanished: Set<ManagedObjectID> = []
    /// Deletes the rollback policy discarded (the object stays, refreshed).
    package var discardedDeletes: Set<ManagedObjectID> = []
    /// The IDs written, as notifications report them.
    package var inserted: Set<ManagedObjectID> = []
    package var updated: Set<ManagedObjectID> = []
    package var deleted: Set<ManagedObjectID> = []
    /// Rows the store deleted by a cascade rule that the saving context did not know reached
    /// them (another save linked them to a deleted object after the context read it).
    package var deletedByRule: Set<ManagedObjectID> = []
    /// Rows whose inverse to a deleted object the store cleared by a nullify rule, for the same
    /// reason.
    package var nullifiedByRule: Set<ManagedObjectID> = []
    /// The ledger token of the transaction, when anything was written.
    package var token: Int64?

    /// An outcome with nothing saved yet, which the store fills in.
    package init() {}
}
