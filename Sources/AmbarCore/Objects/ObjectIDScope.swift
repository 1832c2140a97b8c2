import Synchronization

/// The store and entity an object ID belongs to, made once per pair for the life of the process.
///
/// A ``ManagedObjectID`` holds its scope as an unretained reference, so copying, hashing and
/// comparing IDs touches no reference count and no string: two IDs are in the same store and
/// entity exactly when their scopes are the same instance. Scopes are never freed: the process
/// keeps one small object per store and entity it has named (a few hundred bytes per store it
/// opens), which is what makes the unretained references safe.
package final class ObjectIDScope: Sendable {
    /// The entity's name (a concrete entity, never a parent).
    let entityName: String
    /// The store's UUID; empty for temporary IDs.
    let storeIdentifier: String

    private init(entityName: String, storeIdentifier: String) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
    }

    private struct Name: Hashable {
        let entity: String
        let store: String
    }

    private static let table = Mutex<[Name: ObjectIDScope]>([:])

    /// The one scope of `entityName` in `storeIdentifier`, made on first use. The table keeps it
    /// alive for good, so the unretained reference stays valid.
    package static func interned(entityName: String, storeIdentifier: String) -> Unmanaged<ObjectIDScope> {
        let name = Name(entity: entityName, store: storeIdentifier)
        return table.withLock { table in
            if let scope = table[name] { return Unmanaged.passUnretained(scope) }
            let scope = ObjectIDScope(entityName: entityName, storeIdentifier: storeIdentifier)
            table[name] = scope
            return Unmanaged.passUnretained(scope)
        }
    }
}

/// The permanent scope, in one store, of each temporary ID's entity, remembered for one save so
/// that the store's table is looked up once per entity, not once per object.
package struct PermanentScopes {
    let storeIdentifier: String
    private var byTemporaryScope: [UnsafeMutableRawPointer: Unmanaged<ObjectIDScope>] = [:]

    package init(storeIdentifier: String) { self.storeIdentifier = storeIdentifier }

    /// The scope of `id`'s entity in this store.
    package mutating func scope(of id: ManagedObjectID) -> Unmanaged<ObjectIDScope> {
        let key = id.scope.toOpaque()
        if let found = byTemporaryScope[key] { return found }
        let scope = ObjectIDScope.interned(entityName: id.entityName, storeIdentifier: storeIdentifier)
        byTemporaryScope[key] = scope
        return scope
    }
}

/// The scopes of one store's entities, looked up without a lock: built once for the entities a
/// store knows, with a fallback to ``ObjectIDScope/interned(entityName:storeIdentifier:)`` for
/// any other name.
package struct StoreScopes: Sendable {
    let storeIdentifier: String
    private let byName: [String: Unmanaged<ObjectIDScope>]

    package init(storeIdentifier: String, entityNames: some Sequence<String>) {
        self.storeIdentifier = storeIdentifier
        var byName: [String: Unmanaged<ObjectIDScope>] = [:]
        for name in entityNames {
            byName[name] = ObjectIDScope.interned(entityName: name, storeIdentifier: storeIdentifier)
        }
        self.byName = byName
    }

    /// The scope of `entityName` in this store.
    package func scope(_ entityName: String) -> Unmanaged<ObjectIDScope> {
        byName[entityName] ?? ObjectIDScope.interned(entityName: entityName, storeIdentifier: storeIdentifier)
    }
}
