import AmbarCore
import AmbarStack

/// The models a context has handed out, one per managed object, so that a stored object is one
/// model instance in a context (identity, and Observation, hold). Each managed object holds its
/// model (its companion) as long as the object is in its Ambar context, which holds its objects:
/// a context keeps its models as it keeps their objects, until it is reset or goes (see
/// ``ContextLink`` for why a model does not keep its context in turn).
///
/// A managed object belongs to one Ambar context, and an Ambar context to one model context at
/// a time (a durable consumer's is reset between the model contexts of its batches). Only used
/// on the context's queue.
struct ModelRegistry {
    /// Whether the context keeps its models (false for a successor a link makes: its models
    /// hold it, so it must not hold them).
    let keepsModels: Bool

    func model(for object: ManagedObject) -> (any PersistentModel)? { object.companion as? any PersistentModel }

    /// The model of `object` when it is a `D`.
    func model<D: PersistentModel>(for object: ManagedObject, as type: D.Type) -> D? { object.companion as? D }

    func register(_ model: any PersistentModel, for object: ManagedObject) {
        if keepsModels { object.companion = model }
    }
}
