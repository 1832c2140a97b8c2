/// What a batch operation did: the IDs it touched, to merge into contexts with
/// ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
///
/// A batch is announced to its coordinator's did-save observers like a save, so a stack merges
/// it into its main context, and shared processes hear of it at once; other contexts of your own
/// need the merge.
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
    /// ```swift
    /// let result = try importer.batchInsert(
    ///     entityName: "Task",
    ///     rows: [
    ///         ["title": .string("Water the plants"), "priority": .integer(2), "done": .bool(false)],
    ///         ["title": .string("Fix the gate"), "priority": .integer(4), "done": .bool(false)],
    ///     ])
    /// ```
    ///
    /// - Throws: ``AmbarError/unknownProperty(entity:property:)``,
    ///   ``AmbarError/typeMismatch(entity:property:expected:got:)``,
    ///   ``AmbarError/constraintViolation(entity:attributes:values:existing:)``,
    ///   ``AmbarError/saveRefused(context:reason:)`` (a context that never writes); nothing is written then.
    public func batchInsert(entityName: String, rows: [[String: AttributeValue]]) throws(AmbarError) -> BatchResult {
        try checkMayWrite()
        try persistentStoreCoordinator.checkUsable()
        let (ids, token) = try persistentStoreCoordinator.store.batchInsert(entity: entityName, rows: rows, author: transactionAuthor)
        return announce(BatchResult(objectIDs: ids, token: token), .inserted)
    }

    /// Sets attribute values on every object matching `request`, in the store, in one transaction.
    /// Contexts are not changed, except a stack's main context (see ``BatchResult``); merge the
    /// result into your others.
    ///
    /// ```swift
    /// let urgent = try FetchRequest<TaskItem>(predicate: #Predicate { $0.priority >= 3 })
    /// let updated = try importer.batchUpdate(urgent, set: ["done": .bool(true)])
    /// // Contexts that hold those objects take the change when they merge it:
    /// other.performAndWait { _ = other.mergeChanges(fromContextDidSave: updated.notification(.updated)) }
    /// ```
    public func batchUpdate<T: ManagedObject>(_ request: FetchRequest<T>, set values: [String: AttributeValue]) throws(AmbarError) -> BatchResult {
        try checkMayWrite()
        try persistentStoreCoordinator.checkUsable()
        let (ids, token) = try persistentStoreCoordinator.store.batchUpdate(request.storeQuery, values: values, author: transactionAuthor)
        return announce(BatchResult(objectIDs: ids, token: token), .updated)
    }

    /// Deletes every object matching `request` from the store, in one transaction, without delete
    /// rules (as Core Data's batch delete). Contexts are not changed, except a stack's main
    /// context (see ``BatchResult``); merge the result into your others.
    public func batchDelete<T: ManagedObject>(_ request: FetchRequest<T>) throws(AmbarError) -> BatchResult {
        try checkMayWrite()
        try persistentStoreCoordinator.checkUsable()
        let (ids, token) = try persistentStoreCoordinator.store.batchDelete(request.storeQuery, author: transactionAuthor)
        return announce(BatchResult(objectIDs: ids, token: token), .deleted)
    }

    /// Posts the batch's did-save to the coordinator's observers (not to this context's: it saved
    /// nothing), when it wrote a transaction.
    private func announce(_ result: BatchResult, _ kind: BatchResult.Kind) -> BatchResult {
        guard let token = result.token, !result.objectIDs.isEmpty else { return result }
        let ids = Set(result.objectIDs)
        persistentStoreCoordinator.didSaveObservers.post(
            DidSaveNotification(
                context: identifier, contextName: name, author: transactionAuthor,
                coordinator: persistentStoreCoordinator.identifier, parent: nil,
                inserted: kind == .inserted ? ids : [], updated: kind == .updated ? ids : [], deleted: kind == .deleted ? ids : [],
                token: token, isBatch: true))
        return result
    }
}
