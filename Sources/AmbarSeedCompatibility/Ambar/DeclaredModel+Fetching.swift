import AmbarCore
import AmbarDataStack
import AmbarResults
import Foundation

// The typed helpers of ManagedObject+Fetching (Ambar 6.4's) for declared classes, taking
// Foundation's `Predicate` (from `#Predicate`) and `SortDescriptor`s.

extension DeclaredModel {
    /// The objects of this class that `predicate` matches, in the order of `sortBy`.
    public static func fetch(
        in context: ManagedObjectContext, predicate: Predicate<Self>? = nil, sortBy: [SortDescriptor<Self>] = []
    ) throws(AmbarError) -> [Self] {
        try context.fetch(try FetchRequest<Self>(predicate: predicate, sortBy: sortBy))
    }

    /// How many objects of this class match `predicate`, unsaved inserts and deletes of the
    /// context included.
    public static func count(in context: ManagedObjectContext, predicate: Predicate<Self>) throws(AmbarError) -> Int {
        try count(in: context, predicate: try ObjectPredicate(predicate))
    }

    /// The one loaded object of this class registered in `context` that `predicate` matches,
    /// evaluated in memory (see ``ManagedObjectType/find(in:predicate:)``).
    public static func find(in context: ManagedObjectContext, predicate: Predicate<Self>) throws(AmbarError) -> Self? {
        try find(in: context, predicate: try ObjectPredicate(predicate))
    }

    /// ``find(in:predicate:)-(_,Predicate<Self>)`` first; otherwise the first match in the store.
    public static func findOrFetch(in context: ManagedObjectContext, predicate: Predicate<Self>) throws(AmbarError) -> Self? {
        try findOrFetch(in: context, predicate: try ObjectPredicate(predicate))
    }

    /// Deletes the objects of this class that `predicate` matches in `context` and returns how
    /// many; nothing is saved.
    @discardableResult
    public static func delete(in context: ManagedObjectContext, predicate: Predicate<Self>) throws(AmbarError) -> Int {
        try delete(in: context, predicate: try ObjectPredicate(predicate))
    }
}
