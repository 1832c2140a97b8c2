import AmbarStack
import Foundation

/// What to fetch: SwiftData's `FetchDescriptor`.
///
/// ```swift
/// var descriptor = FetchDescriptor<Trip>(
///     predicate: #Predicate { $0.name.localizedStandardContains("lis") },
///     sortBy: [SortDescriptor(\.start, order: .reverse)])
/// descriptor.fetchLimit = 10
/// let trips = try context.fetch(descriptor)
/// ```
public struct FetchDescriptor<T: PersistentModel>: @unchecked Sendable {  // Predicate and SortDescriptor are values
    /// Which models (all when `nil`).
    public var predicate: Predicate<T>?
    /// In which order.
    public var sortBy: [SortDescriptor<T>]
    /// At most this many (all when `nil`).
    public var fetchLimit: Int?
    /// Skipping this many first.
    public var fetchOffset: Int?
    /// Whether unsaved inserts and changes count (true by default).
    public var includePendingChanges: Bool = true
    /// Accepted: models load their values when first read, whichever are named.
    public var propertiesToFetch: [PartialKeyPath<T>] = []
    /// Accepted: relationships load their destinations when first read.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []

    /// Fetches the models `predicate` matches, in the order of `sortBy`.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// The Ambar request the descriptor states.
    ///
    /// - Throws: ``SwiftDataError`` (``SwiftDataError/Code/unsupportedPredicate`` or
    ///   ``SwiftDataError/Code/unsupportedSortDescriptor``) naming what has no equivalent in a
    ///   store query.
    func request() throws -> FetchRequest<ManagedObject> {
        var request = FetchRequest<ManagedObject>(entityName: T.entityName)
        if let predicate {
            do {
                request.predicate = try ObjectPredicate(predicate)
            } catch {
                throw SwiftDataError(.unsupportedPredicate, "the #Predicate of a FetchDescriptor<\(T.self)> has no equivalent in a store query", cause: error)
            }
        }
        for sort in sortBy {
            do {
                request.sortDescriptors.append(try ObjectSortDescriptor(sort))
            } catch {
                throw SwiftDataError(.unsupportedSortDescriptor, "a SortDescriptor of a FetchDescriptor<\(T.self)> cannot sort a store query", cause: error)
            }
        }
        request.fetchLimit = max(fetchLimit ?? 0, 0)
        request.fetchOffset = max(fetchOffset ?? 0, 0)
        request.includesPendingChanges = includePendingChanges
        // A fetch gives models with their values, as SwiftData's does.
        request.returnsObjectsAsFaults = false
        return request
    }
}
