import AmbarCore
import AmbarDataStack
import AmbarResults

extension ManagedObjectContext {
    /// This context's instance of `object`, which may belong to another context (Ambar's
    /// `localInstance(of:)`).
    ///
    /// - In this context: refreshed (keeping unsaved changes) and returned as is.
    /// - In another context: looked up by ID in this context, through this context's own
    ///   coordinator (the seed used the source's, a bug), reading the store if needed.
    ///
    /// Call it on this context's queue. The source object is only asked for its ID; when it lives
    /// on another queue, prefer passing its ``ManagedObject/objectID`` to ``localInstance(ofObjectWith:as:)``.
    ///
    /// - Throws: ``AmbarError/invalidObjectID(_:)`` for an object not yet saved (temporary ID) or
    ///   deleted from its context; ``AmbarError/objectNotFound(_:)`` when the object is not in
    ///   this context's store.
    public func localInstance<T: ManagedObject>(of object: T) throws(AmbarError) -> T {
        try checkQueue("localInstance")
        if object.managedObjectContext === self {
            try refresh(object, mergeChanges: true)
            return object
        }
        guard object.managedObjectContext != nil else {
            throw .invalidObjectID("\(object.objectID) belongs to no context (it was deleted and saved, or its context reset); fetch it again")
        }
        return try localInstance(ofObjectWith: object.objectID, as: T.self)
    }

    /// This context's instance of the object with `id`, typed as `T`.
    public func localInstance<T: ManagedObject>(ofObjectWith id: ManagedObjectID, as type: T.Type = T.self) throws(AmbarError) -> T {
        try checkQueue("localInstance")
        guard !id.isTemporaryID else {
            throw .invalidObjectID("\(id) is temporary: save its context (or obtain permanent IDs) before using it in another context")
        }
        guard id.storeIdentifier == persistentStoreCoordinator.storeIdentifier else { throw .objectNotFound(id) }
        let local = try existingObject(with: id)
        guard let typed = local as? T else {
            throw .invalidObjectID("\(id) is a \(local.entityName), not a \(T.self)")
        }
        return typed
    }
}
