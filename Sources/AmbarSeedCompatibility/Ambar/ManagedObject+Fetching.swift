import AmbarCore
import AmbarDataStack
import AmbarResults

/// What every managed-object class is, so typed helpers can return the class itself:
/// `Product.fetch(in: context, predicate: …)` is a `[Product]` (Ambar's `ManagedObjectType`).
public protocol ManagedObjectType: AnyObject {}

extension ManagedObject: ManagedObjectType {}

/// Typed fetch helpers on managed-object classes. Unlike the seed, failures throw (the seed
/// returned `[]` or `0`, hiding errors). Every helper must run on the context's queue.
extension ManagedObjectType where Self: ManagedObject {
    /// A fetch request for this class's entity.
    public static func fetchRequest(
        includePending: Bool = true, returnsObjectsAsFaults: Bool = true,
        predicate: ObjectPredicate? = nil, sortedWith sortDescriptors: [ObjectSortDescriptor] = []
    ) -> FetchRequest<Self> {
        var request = FetchRequest<Self>(predicate: predicate, sortDescriptors: sortDescriptors)
        request.includesPendingChanges = includePending
        request.returnsObjectsAsFaults = returnsObjectsAsFaults
        return request
    }

    /// The objects of this class matching `predicate`, in `sortDescriptors` order.
    public static func fetch(
        in context: ManagedObjectContext, includePending: Bool = true, returnsObjectsAsFaults: Bool = true,
        predicate: ObjectPredicate? = nil, sortedWith sortDescriptors: [ObjectSortDescriptor] = []
    ) throws(AmbarError) -> [Self] {
        try context.fetch(
            fetchRequest(
                includePending: includePending, returnsObjectsAsFaults: returnsObjectsAsFaults,
                predicate: predicate, sortedWith: sortDescriptors))
    }

    /// How many objects of this class match `predicate` (with `includePending`, unsaved inserts
    /// and deletes of the context count).
    public static func count(in context: ManagedObjectContext, includePending: Bool = true, predicate: ObjectPredicate? = nil) throws(AmbarError) -> Int {
        try context.count(for: fetchRequest(includePending: includePending, predicate: predicate))
    }

    /// The distinct non-nil values of `key` among the matching objects.
    public static func fetchDistinctValues<V: AttributeValueConvertible & Hashable>(
        of key: Key<V>, in context: ManagedObjectContext, predicate: ObjectPredicate? = nil
    ) throws(AmbarError) -> Set<V> {
        let rows = try context.fetchValues(fetchRequest(predicate: predicate), properties: [key.path], distinct: true)
        var values = Set<V>()
        for row in rows {
            guard let raw = row[key.path], !raw.isNull, let value = V(attributeValue: raw) else { continue }
            values.insert(value)
        }
        return values
    }

    /// The distinct combinations of `properties` among the matching objects, each mapped through
    /// `transform`; combinations it maps to `nil` are dropped.
    public static func fetchDistinct<R>(
        properties: [String], in context: ManagedObjectContext, predicate: ObjectPredicate? = nil,
        _ transform: ([String: AttributeValue]) -> R?
    ) throws(AmbarError) -> [R] {
        try context.fetchValues(fetchRequest(predicate: predicate), properties: properties, distinct: true).compactMap(transform)
    }

    /// The one object of this class that is already registered in `context`, loaded (not a fault)
    /// and matching `predicate` — evaluated in memory, never touching the store. `nil` when none or
    /// more than one match (Ambar 6.4's rule: an ambiguous match is no match).
    public static func find(in context: ManagedObjectContext, predicate: ObjectPredicate) throws(AmbarError) -> Self? {
        try context.checkQueue("find")
        var found: Self?
        for object in context.registeredObjects {
            guard let candidate = object as? Self, !candidate.isFault, !candidate.isDeleted else { continue }
            guard try predicate.evaluate(with: candidate) else { continue }
            if found != nil { return nil }
            found = candidate
        }
        return found
    }

    /// ``find(in:predicate:)`` first; otherwise the first match in the store, fully loaded.
    public static func findOrFetch(in context: ManagedObjectContext, predicate: ObjectPredicate) throws(AmbarError) -> Self? {
        if let found = try find(in: context, predicate: predicate) { return found }
        var request = fetchRequest(returnsObjectsAsFaults: false, predicate: predicate)
        request.fetchLimit = 1
        return try context.fetch(request).first
    }

    /// A results controller for this class. It needs at least one sort descriptor (the order of
    /// the results must be defined).
    public static func fetchedResultsController(
        in context: ManagedObjectContext, includePending: Bool = true, sectionNameKeyPath: String? = nil,
        predicate: ObjectPredicate? = nil, sortedWith sortDescriptors: [ObjectSortDescriptor]
    ) throws(AmbarError) -> FetchedResultsController<Self> {
        guard !sortDescriptors.isEmpty else {
            throw .invalidFetchRequest("a results controller needs at least one sort descriptor; pass sortedWith: [Key<…>(\"…\").sorted()]")
        }
        return FetchedResultsController(
            fetchRequest: fetchRequest(includePending: includePending, predicate: predicate, sortedWith: sortDescriptors),
            context: context, sectionNameKeyPath: sectionNameKeyPath)
    }

    /// Deletes the matching objects in `context` and returns how many; nothing is saved.
    @discardableResult
    public static func delete(in context: ManagedObjectContext, predicate: ObjectPredicate? = nil) throws(AmbarError) -> Int {
        let objects = try fetch(in: context, predicate: predicate)
        for object in objects { try context.delete(object) }
        return objects.count
    }
}
