import Foundation

/// A class of another layer whose instances stand for managed objects in store queries: the
/// SwiftData-style models of `AmbarSwiftData`. A `#Predicate` or a `SortDescriptor` over such a
/// class compiles as one over a declared ``ManagedObject`` subclass does (see
/// ``ObjectPredicate/init(_:)``).
///
/// Not for direct use: `AmbarSwiftData`'s `PersistentModel` refines it, and its `@Model` macro
/// writes what it asks for.
public protocol _QueryableModel: AnyObject {
    /// The name of the stored property at `keyPath`, when the class persists one there.
    static func _queryablePropertyName(for keyPath: AnyKeyPath) -> String?
    /// The object the instance stands for, once it has one (after it was inserted or fetched).
    var _queryableObjectID: ManagedObjectID? { get }
}

/// An optional model: a to-one relationship's value.
protocol OptionalQueryableModel {}
extension Optional: OptionalQueryableModel where Wrapped: _QueryableModel {}

/// An array of models: a to-many relationship's value.
protocol QueryableModelCollection {}
extension Array: QueryableModelCollection where Element: _QueryableModel {}
extension Optional: QueryableModelCollection where Wrapped: QueryableModelCollection {}
