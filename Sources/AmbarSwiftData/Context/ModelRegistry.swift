import AmbarStack

/// The models a context has handed out that are still in use, one per managed object, so that
/// a stored object is one model instance in a context (identity, and Observation, hold). Models
/// are held weakly, as a Core Data context holds its objects: a model no one uses any more goes,
/// and the next read of its object makes another (its values, changes included, live in the
/// managed object, which the context keeps).
///
/// Only used on the context's queue.
final class ModelRegistry: @unchecked Sendable {  // confined to the context's queue
    private struct Entry {
        weak var model: (any PersistentModel)?
    }
    private var models: [ObjectIdentifier: Entry] = [:]
    private var registrations = 0

    func model(for object: ManagedObject) -> (any PersistentModel)? { models[ObjectIdentifier(object)]?.model }

    func register(_ model: any PersistentModel, for object: ManagedObject) {
        models[ObjectIdentifier(object)] = Entry(model: model)
        registrations += 1
        // Now and then, forget the entries of models that went.
        if registrations.isMultiple(of: 4096) { models = models.filter { $0.value.model != nil } }
    }

    @discardableResult
    func remove(_ object: ManagedObject) -> (any PersistentModel)? { models.removeValue(forKey: ObjectIdentifier(object))?.model }
}
