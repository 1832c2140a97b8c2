import AmbarCore
import Foundation

/// The objects one ledger transaction changed, gathered from its `changes` value
/// (``LedgerChangeEncoding``) as either backend reads them.
package struct LedgerChanges {
    package private(set) var inserted = Set<ManagedObjectID>()
    package private(set) var updated = Set<ManagedObjectID>()
    package private(set) var deleted = Set<ManagedObjectID>()
    /// The changed property names of each updated object.
    package private(set) var updatedProperties: [ManagedObjectID: [String]] = [:]
    /// The preserved values of each deleted object that has them.
    package private(set) var tombstones: [ManagedObjectID: [String: AttributeValue]] = [:]
    private let store: String

    /// Changes of the store `store` (its identifier, for the object IDs).
    package init(store: String) { self.store = store }

    /// Adds the changes of one ledger transaction, as ``LedgerChangeEncoding`` wrote them;
    /// `location` names the store in the error when they cannot be read.
    package mutating func add(encoded data: Data, location: String) throws(AmbarError) {
        var found: [LedgerTombstone] = []
        try LedgerChangeEncoding.decode(data, location: location, tombstone: { found.append($0) }) { entity, kind, names, keys in add(entity, kind, names, keys)
        }
        found.forEach { add($0) }
    }

    /// ``add(encoded:location:)`` from bytes the caller holds (a statement's column).
    package mutating func add(encodedBytes bytes: UnsafeRawBufferPointer, location: String) throws(AmbarError) {
        var found: [LedgerTombstone] = []
        try LedgerChangeEncoding.decode(bytes: bytes, location: location, tombstone: { found.append($0) }) { entity, kind, names, keys in
            add(entity, kind, names, keys)
        }
        found.forEach { add($0) }
    }

    private mutating func add(_ tombstone: LedgerTombstone) {
        let scope = ObjectIDScope.interned(entityName: tombstone.entity, storeIdentifier: store)
        tombstones[ManagedObjectID(scope: scope, primaryKey: tombstone.primaryKey)] = tombstone.values
    }

    private mutating func add(_ entity: String, _ kind: LedgerEntry.Kind, _ names: [String], _ keys: [Int64]) {
        let scope = ObjectIDScope.interned(entityName: entity, storeIdentifier: store)
        for pk in keys {
            let id = ManagedObjectID(scope: scope, primaryKey: pk)
            switch kind {
            case .insert: inserted.insert(id)
            case .update:
                updated.insert(id)
                updatedProperties[id] = names
            case .delete: deleted.insert(id)
            }
        }
    }
}
