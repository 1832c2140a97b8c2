/// What a batch operation did: the IDs it touched, to merge into contexts with
/// ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
public struct BatchResult: Sendable {
    /// The objects inserted, updated or deleted.
    public let objectIDs: [ManagedObjectID]
    /// The ledger token of the batch's transaction (nil when it changed nothing).
    public let token: Int64?

    /// A did-save notification for merging, with the IDs in the set `kind` names.
    public func notification(_ kind: Kind) -> DidSaveNotification {
        let ids = Set(objectIDs)
        switch kind {
        case .inserted: return DidSaveNotification(inserted: ids, updated: [], deleted: [], token: token)
        case .updated: return DidSaveNotification(inserted: [], updated: ids, deleted: [], token: token)
        case .deleted: return DidSaveNotification(inserted: [], updated: [], deleted: ids, token: token)
        }
    }

    /// Which kind of change a batch made.
    public enum Kind: Sendable { case inserted, updated, deleted }
}

extension ManagedObjectContext {
    /// Inserts rows straight into the store (no objects, no validation beyond types and
    /// optionality, no relationships), in one transaction.
    ///
    /// - Throws: ``AmbarError/unknownProperty(entity:property:)``,
    ///   ``AmbarError/typeMismatch(entity:property:expected:got:)``,
    ///   ``AmbarError/constraintViolation(entity:attributes:values:existing:)``; nothing is written then.
    public func batchInsert(entityName: String, rows: [[String: AttributeValue]]) throws(AmbarError) -> BatchResult {
        try persistentStoreCoordinator.checkUsable()
        let (ids, token) = try persistentStoreCoordinator.store.batchInsert(entity: entityName, rows: rows, author: transactionAuthor)
        return BatchResult(objectIDs: ids, token: token)
    }

    /// Sets attribute values on every object matching `request`, in the store, in one transaction.
    /// Contexts are not changed; merge the result into them.
    public func batchUpdate<T: ManagedObject>(_ request: FetchRequest<T>, set values: [String: AttributeValue]) throws(AmbarError) -> BatchResult {
        try persistentStoreCoordinator.checkUsable()
        let (ids, token) = try persistentStoreCoordinator.store.batchUpdate(request.storeQuery, values: values, author: transactionAuthor)
        return BatchResult(objectIDs: ids, token: token)
    }

    /// Deletes every object matching `request` from the store, in one transaction, without delete
    /// rules (as Core Data's batch delete). Contexts are not changed; merge the result into them.
    public func batchDelete<T: ManagedObject>(_ request: FetchRequest<T>) throws(AmbarError) -> BatchResult {
        try persistentStoreCoordinator.checkUsable()
        let (ids, token) = try persistentStoreCoordinator.store.batchDelete(request.storeQuery, author: transactionAuthor)
        return BatchResult(objectIDs: ids, token: token)
    }
}
