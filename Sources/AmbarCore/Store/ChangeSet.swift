import Foundation

/// An object to insert.
package struct InsertChange: Sendable {
    package var id: ManagedObjectID
    package let values: RowValues
    package let toOne: [ManagedObjectID?]
}

/// An object to update, with what the context had read and what it changed.
package struct UpdateChange: Sendable {
    package let id: ManagedObjectID
    /// The names of every changed stored property (attributes and relationships), sorted and
    /// joined by commas, as the ledger records them.
    package let ledgerProperties: String
    package let expectedVersion: Int64
    package let snapshot: RowValues
    package let values: RowValues
    package let changedAttributes: [Int]
    package let snapshotToOne: [ManagedObjectID?]
    package let toOne: [ManagedObjectID?]
    package let changedToOne: [Int]
}

/// An object to delete.
package struct DeleteChange: Sendable {
    package let id: ManagedObjectID
    package let expectedVersion: Int64
}

/// A row to add to or remove from a join table, oriented from `owner` through its relationship.
package struct JoinChange: Sendable, Hashable {
    package let owner: ManagedObjectID
    package let relationship: String
    package let destination: ManagedObjectID
    package let isInsert: Bool
}

/// The order of an ordered relationship of `owner`, as it is after the save.
package struct OrderChange: Sendable, Hashable {
    package let owner: ManagedObjectID
    package let relationship: String
    package let destinations: [ManagedObjectID]
}

/// Everything one context save writes.
package struct ChangeSet: Sendable {
    package var inserts: [InsertChange] = []
    package var updates: [UpdateChange] = []
    package var deletes: [DeleteChange] = []
    package var joins: [JoinChange] = []
    package var orders: [OrderChange] = []
    package var mergePolicy: MergePolicy = .error
    package var author: String?
    package var contextName: String?
    /// Recorded with the transaction; a second save with the same key is refused.
    package var idempotencyKey: String?
    /// A durable consumer's position, moved in the same transaction (only if it is where the
    /// consumer last read it).
    package var consumerMove: ConsumerMove?
    var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && joins.isEmpty && orders.isEmpty }
}
