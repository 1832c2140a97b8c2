import Foundation

/// What to read: an entity, a predicate, an order and a window.
package struct StoreQuery: Sendable {
    package var entity: String
    package var predicate: ObjectPredicate?
    package var sortDescriptors: [ObjectSortDescriptor] = []
    package var limit: Int?
    package var offset: Int = 0
    package var includesSubentities = true
}

/// One object's stored state.
package struct StoreRow: Sendable {
    package let id: ManagedObjectID
    package let version: Int64
    /// Values in the entity layout's attribute order.
    package let values: RowValues
    /// To-one destinations by relationship index (to-many slots are nil).
    package let toOne: [ManagedObjectID?]

    /// A row as a store read it.
    package init(id: ManagedObjectID, version: Int64, values: RowValues, toOne: [ManagedObjectID?]) {
        self.id = id
        self.version = version
        self.values = values
        self.toOne = toOne
    }
}
