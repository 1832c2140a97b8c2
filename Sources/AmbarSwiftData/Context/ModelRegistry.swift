import AmbarCore
import AmbarStack

/// The models a context has handed out that are still in use, one per managed object, so that
/// a stored object is one model instance in a context (identity, and Observation, hold). Each
/// managed object holds its model weakly (its companion), as a Core Data context holds its
/// objects: a model no one uses any more goes, and the next read of its object makes another
/// (its values, changes included, live in the managed object, which the context keeps).
///
/// A managed object belongs to one Ambar context, and an Ambar context to one model context at
/// a time (a durable consumer's is reset between the model contexts of its batches). Only used
/// on the context's queue.
struct ModelRegistry {
    func model(for object: ManagedObject) -> (any PersistentModel)? { object.companion as? any PersistentModel }

    /// The model of `object` when it is a `D`.
    func model<D: PersistentModel>(for object: ManagedObject, as type: D.Type) -> D? { object.companion as? D }

    func register(_ model: any PersistentModel, for object: ManagedObject) { object.companion = model }

    @discardableResult
    func remove(_ object: ManagedObject) -> (any PersistentModel)? {
        defer { object.companion = nil }
        return model(for: object)
    }
}
