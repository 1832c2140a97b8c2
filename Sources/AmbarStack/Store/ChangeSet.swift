import Foundation

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
    /// A durable consumer's position, moved in the same transaction (only if it is where the
    /// consumer last read it).
    var consumerMove: ConsumerMove?
    var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && joins.isEmpty && orders.isEmpty }
}
