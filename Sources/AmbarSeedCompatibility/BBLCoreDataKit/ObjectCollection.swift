import AmbarCore
import AmbarDataStack
import AmbarResults
import Foundation

/// The objects of one entity in one context (BBLCoreDataKit's `BBLCollection`): lookup and
/// fetch-or-create by id, and results controllers. Use it on the context's queue.
public struct ObjectCollection<T: StringIdentified> {
    /// The context.
    public let context: ManagedObjectContext

    /// A collection of `T` in `context`.
    public init(context: ManagedObjectContext) { self.context = context }

    private var idKey: Key<String> { Key<String>(T.idStringKey) }

    /// The object with `idString`, or `nil` (unsaved inserts of the context count).
    public func existingObject(idString: String) throws(AmbarError) -> T? {
        var request = FetchRequest<T>(predicate: idKey == idString)
        request.fetchLimit = 1
        request.returnsObjectsAsFaults = false
        return try context.fetch(request).first
    }

    /// The object with `idString`; a new one with that id (unsaved) when there is none. Twice in
    /// one context gives the same object; two contexts may each create one unless the attribute
    /// has a uniqueness constraint.
    public func object(idString: String) throws(AmbarError) -> T {
        if let found = try existingObject(idString: idString) { return found }
        let object = try context.insert(T.self)
        object.idString = idString
        return object
    }

    /// The object with the UUID `identifier`, created when missing.
    public func object(identifier: UUID) throws(AmbarError) -> T {
        try object(idString: identifier.uuidString)
    }

    /// A results controller of every object, by id.
    public func allObjects() -> FetchedResultsController<T> {
        frc(sortDescriptors: [idKey.sorted()])
    }

    /// A results controller sorted by `sortKey`.
    public func frc(sortKey: String, ascending: Bool = true, predicate: ObjectPredicate? = nil, sectionKeyPath: String? = nil) -> FetchedResultsController<T> {
        frc(sortDescriptors: [ObjectSortDescriptor(key: sortKey, ascending: ascending)], predicate: predicate, sectionKeyPath: sectionKeyPath)
    }

    /// A results controller with `sortDescriptors`.
    public func frc(sortDescriptors: [ObjectSortDescriptor], predicate: ObjectPredicate? = nil, sectionKeyPath: String? = nil) -> FetchedResultsController<T> {
        FetchedResultsController(
            fetchRequest: FetchRequest<T>(predicate: predicate, sortDescriptors: sortDescriptors), context: context, sectionNameKeyPath: sectionKeyPath)
    }

    /// Deletes every object of the collection in the context; nothing is saved. Returns how many.
    @discardableResult
    public func deleteAll() throws(AmbarError) -> Int {
        try T.delete(in: context)
    }
}

extension ObjectCollection where T: DeclaredModel {
    /// A results controller over the collection's objects that `predicate` (from `#Predicate`)
    /// matches, in the order of `sortBy`.
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` for an expression or sort with no store
    ///   equivalent; ``AmbarError/invalidFetchRequest(_:)`` when `sortBy` is empty.
    public func frc(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>], sectionKeyPath: String? = nil) throws(AmbarError) -> FetchedResultsController<
        T
    > {
        try FetchedResultsController(predicate: predicate, sortBy: sortBy, context: context, sectionNameKeyPath: sectionKeyPath)
    }
}
