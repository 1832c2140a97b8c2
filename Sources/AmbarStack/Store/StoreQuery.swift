import Foundation

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
