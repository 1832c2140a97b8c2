/// How a save resolves conflicts: objects changed in the store (by another context, coordinator or
/// process) since this context read them, and inserts that collide on a uniqueness constraint.
/// The semantics are Core Data's.
public enum MergePolicy: String, Sendable, Hashable, Codable {
    /// The save throws ``AmbarError/mergeConflict(_:)`` (or
    /// ``AmbarError/constraintViolation(entity:attributes:values:existing:)``) and writes nothing.
    case error
    /// Per property, the store's value wins where both changed; other in-memory changes are saved.
    /// A colliding insert becomes the existing object, with the store's values.
    case mergeByPropertyStoreTrump
    /// Per property, the in-memory value wins; properties changed only in the store keep the
    /// store's value. A colliding insert updates the existing object with its values.
    case mergeByPropertyObjectTrump
    /// The whole in-memory object is written over the store's row.
    case overwrite
    /// Conflicting objects drop their in-memory changes and take the store's state; changes to
    /// non-conflicting objects are still saved.
    case rollback
}
