import Foundation

/// The objects one ledger transaction changed, gathered from its change rows (one per entity and
/// kind, the primary keys packed) as either backend reads them.
struct LedgerChanges {
    private(set) var inserted = Set<ManagedObjectID>()
    private(set) var updated = Set<ManagedObjectID>()
    private(set) var deleted = Set<ManagedObjectID>()
    /// The changed property names of each updated object.
    private(set) var updatedProperties: [ManagedObjectID: [String]] = [:]
    private let store: String

    /// Changes of the store `store` (its identifier, for the object IDs).
    init(store: String) { self.store = store }

    /// Adds one change row: `kind` (a ``LedgerEntry/Kind`` raw value; an unknown kind is skipped)
    /// of the objects of `entity` with the primary keys `packed`; `attributes`, comma-separated,
    /// names the properties an update changed.
    mutating func add(entity: String, kind: Int, attributes: String?, packed: Data) {
        let names = attributes?.split(separator: ",").map(String.init) ?? []
        for pk in SQLiteStore.unpack(packed) {
            let id = ManagedObjectID(entityName: entity, storeIdentifier: store, primaryKey: pk)
            switch LedgerEntry.Kind(rawValue: kind) {
            case .insert: inserted.insert(id)
            case .update:
                updated.insert(id)
                updatedProperties[id] = names
            case .delete: deleted.insert(id)
            case nil: break
            }
        }
    }
}
