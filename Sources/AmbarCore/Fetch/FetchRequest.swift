/// What to fetch: an entity, a predicate, an order and a window, and how to return the objects.
///
/// The result type `T` is the managed-object class; use ``ManagedObject`` itself for entities
/// without a subclass (`FetchRequest<ManagedObject>(entityName: "Note")`).
///
/// ```swift
/// var request = try FetchRequest<TaskItem>(predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.priority, order: .reverse)])
/// request.fetchLimit = 10
/// let top = try context.fetch(request)
/// // The same request with typed keys, and with an NSPredicate format string:
/// let byKey = FetchRequest<TaskItem>(predicate: Key<Bool>("done") == false, sortDescriptors: [Key<Int>("priority").sorted(ascending: false)])
/// let byFormat = try FetchRequest<TaskItem>(format: "done == NO", sortDescriptors: [Key<Int>("priority").sorted(ascending: false)])
/// ```
public struct FetchRequest<T: ManagedObject>: Sendable {
    /// The entity to fetch.
    public var entityName: String
    /// Which objects; `nil` means all.
    public var predicate: ObjectPredicate?
    /// The order; ties are broken by primary key.
    public var sortDescriptors: [ObjectSortDescriptor] = []
    /// At most this many results (0: no limit).
    public var fetchLimit = 0
    /// Skip this many results first.
    public var fetchOffset = 0
    /// When above 0, objects are returned as faults and loaded this many at a time on first access.
    public var fetchBatchSize = 0
    /// Whether unsaved inserts, updates and deletes of the context (and its parents) count.
    public var includesPendingChanges = true
    /// Whether objects come back as faults (their values are read with them and filled on first
    /// access, so this costs no extra query).
    public var returnsObjectsAsFaults = true
    /// Whether objects of sub-entities are included.
    public var includesSubentities = true

    /// A request for the entity of `T`.
    public init(predicate: ObjectPredicate? = nil, sortDescriptors: [ObjectSortDescriptor] = []) {
        self.entityName = T.entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// A request for the entity named `entityName`.
    public init(entityName: String, predicate: ObjectPredicate? = nil, sortDescriptors: [ObjectSortDescriptor] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    var storeQuery: StoreQuery {
        StoreQuery(
            entity: entityName, predicate: predicate, sortDescriptors: sortDescriptors,
            limit: fetchLimit > 0 ? fetchLimit : nil, offset: fetchOffset,
            includesSubentities: includesSubentities)
    }
}
