import AmbarCore
import Foundation

// The helpers that take a builder predicate take Foundation's `Predicate` (from `#Predicate`) and
// `SortDescriptor`s as well, for declared classes: each compiles them once, to the same
// `ObjectPredicate` and sorts (``ObjectPredicate/init(_:)``), and throws
// ``AmbarError/invalidPredicate(_:)`` naming what it cannot compile.

extension FetchedResultsController where T: DeclaredModel {
    /// A results controller over the objects of `T` that `predicate` matches, in the order of
    /// `sortBy`.
    ///
    /// ```swift
    /// let controller = try FetchedResultsController<TaskItem>(
    ///     predicate: #Predicate { !$0.done },
    ///     sortBy: [SortDescriptor(\.priority), SortDescriptor(\.title)],
    ///     context: stack.mainContext)
    /// try controller.performFetch()
    /// ```
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` for an expression or sort with no store
    ///   equivalent; ``AmbarError/invalidFetchRequest(_:)`` when `sortBy` is empty (the order of
    ///   the results must be defined).
    public convenience init(
        predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>], context: ManagedObjectContext, sectionNameKeyPath: String? = nil
    ) throws(AmbarError) {
        guard !sortBy.isEmpty else {
            throw .invalidFetchRequest("a results controller needs at least one sort descriptor; pass sortBy: [SortDescriptor(\\.…)]")
        }
        self.init(fetchRequest: try FetchRequest<T>(predicate: predicate, sortBy: sortBy), context: context, sectionNameKeyPath: sectionNameKeyPath)
    }
}

extension EntityMonitor where T: DeclaredModel {
    /// Monitors `T` in `context`, reporting the inserted and updated objects that `predicate`
    /// matches (and every deletion, by ID).
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` for an expression with no equivalent.
    public convenience init(context: ManagedObjectContext, predicate: Predicate<T>, callback: @escaping Callback) throws(AmbarError) {
        self.init(context: context, predicate: try ObjectPredicate(predicate), callback: callback)
    }
}
