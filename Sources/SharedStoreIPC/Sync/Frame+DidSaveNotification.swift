import AmbarCore
import AmbarDataStack
import Foundation

// The conversion between a save's notification and its frame: the wire carries entity names and
// primary keys; the object IDs are made here, in the sync layer, from the store's identifier.

extension Frame.DidSave {
    /// Builds the frame for a local did-save notification of a store.
    public init(notification: DidSaveNotification, storeUUID: UUID, token: Int64, processID: Int32, instanceID: UInt64 = ProcessInstance.id) {
        var changes: [String: Frame.EntityChanges] = [:]
        for id in notification.inserted { if let pk = id.primaryKey { changes[id.entityName, default: .init()].inserted.append(pk) } }
        for id in notification.updated { if let pk = id.primaryKey { changes[id.entityName, default: .init()].updated.append(pk) } }
        for id in notification.deleted { if let pk = id.primaryKey { changes[id.entityName, default: .init()].deleted.append(pk) } }
        for key in changes.keys { changes[key]?.sort() }
        self.init(storeUUID: storeUUID, token: token, processID: processID, instanceID: instanceID, author: notification.author, changes: changes)
    }

    /// The object IDs as a did-save notification.
    public var notification: DidSaveNotification { notification(inStore: storeUUID.uuidString) }

    /// The object IDs as a did-save notification, with `store` as their store identifier (the
    /// store's own spelling of its UUID).
    func notification(inStore store: String) -> DidSaveNotification {
        var inserted = Set<ManagedObjectID>()
        var updated = Set<ManagedObjectID>()
        var deleted = Set<ManagedObjectID>()
        for (entity, c) in changes {
            func ids(_ pks: [Int64]) -> [ManagedObjectID] {
                pks.map { ManagedObjectID(entityName: entity, storeIdentifier: store, primaryKey: $0) }
            }
            inserted.formUnion(ids(c.inserted))
            updated.formUnion(ids(c.updated))
            deleted.formUnion(ids(c.deleted))
        }
        return DidSaveNotification(inserted: inserted, updated: updated, deleted: deleted, author: author, token: token)
    }
}
