import AmbarCore

/// Reports the changes to one entity's objects in a context: local edits, saves merged from other
/// contexts, and — with SharedStoreIPC — saves of other processes merged into the main context
/// (Ambar's `EntityMonitor`).
///
/// The callback runs on the context's queue (the main queue for a main context), only when at
/// least one set is non-empty. Inserted and updated objects are filtered by the predicate; deleted
/// objects are reported by ID, since a deleted object can no longer be read (the seed passed the
/// objects), and are not filtered by the predicate. Keep the monitor alive as long as you want
/// the reports.
///
/// ```swift
/// let monitor = try EntityMonitor<TaskItem>(context: context, predicate: #Predicate { !$0.done }) { inserted, updated, deleted in
///     print("\(inserted.count) new, \(updated.count) changed, \(deleted.count) gone")
/// }
/// ```
public final class EntityMonitor<T: ManagedObject> {
    /// Receives the inserted and updated objects of `T` and the IDs of the deleted ones.
    public typealias Callback = (_ inserted: Set<T>, _ updated: Set<T>, _ deleted: Set<ManagedObjectID>) -> Void

    /// The monitored context.
    public let context: ManagedObjectContext
    /// The filter on inserted and updated objects.
    public let predicate: ObjectPredicate?
    /// Called on the context's queue when a changed object could not be checked: it could not be
    /// read (the store's server out of reach) or the predicate could not be evaluated on it. The
    /// object is left out of that report; the failure is also posted to the context's failure
    /// observers (``ManagedObjectContext/observeFailures(_:)``).
    ///
    /// ```swift
    /// monitor.onError = { error in logger.error("a change could not be checked: \(error)") }
    /// ```
    public var onError: ((AmbarError) -> Void)?
    private let callback: Callback
    private var observation: ContextObservation?

    /// Monitors `T` (and its sub-entities) in `context`.
    public init(context: ManagedObjectContext, predicate: ObjectPredicate? = nil, callback: @escaping Callback) {
        self.context = context
        self.predicate = predicate
        self.callback = callback
        let box = UncheckedBox(self)
        observation = context.observeObjectsDidChange { note in box.value?.handle(note) }
    }

    deinit { observation?.cancel() }

    /// Stops the reports.
    public func cancel() { observation?.cancel() }

    private func isMonitored(_ id: ManagedObjectID) -> Bool {
        context.layoutIfKnown(id.entityName)?.isKind(of: T.entityName) ?? false
    }

    /// Whether `object` passes the predicate; nil (reported) when that cannot be known.
    private func matches(_ object: T) -> Bool? {
        guard let predicate else { return true }
        do throws(AmbarError) {
            return try PredicateEvaluation.evaluate(predicate, on: object)
        } catch {
            fail(object.objectID, "evaluate the monitor's predicate on a changed object (left out of this report)", error)
            return nil
        }
    }

    private func fail(_ id: ManagedObjectID, _ operation: String, _ error: AmbarError) {
        context.report(ContextFailure(operation: operation, object: id, property: nil, error: error))
        onError?(error)
    }

    private func handle(_ note: ObjectsDidChangeNotification) {
        let gone = note.deleted.union(note.invalidated)
        var inserted = Set<T>()
        for id in note.inserted.subtracting(gone) where isMonitored(id) {
            let object: ManagedObject
            if let registered = context.registeredObject(for: id) {
                object = registered
            } else {
                do throws(AmbarError) {
                    object = try context.object(with: id)
                } catch {
                    fail(id, "read an inserted object for the monitor (left out of this report)", error)
                    continue
                }
            }
            guard let typed = object as? T, matches(typed) == true else { continue }
            inserted.insert(typed)
        }
        var updated = Set<T>()
        let changedIDs =
            note.refreshedAll
            ? Set(context.registeredObjects.map(\.objectID))
            : note.updated.union(note.refreshed)
        for id in changedIDs.subtracting(gone).subtracting(note.inserted) where isMonitored(id) {
            guard let object = context.registeredObject(for: id) as? T, !object.isDeleted, matches(object) == true else { continue }
            updated.insert(object)
        }
        let deleted = gone.filter(isMonitored)
        guard !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty else { return }
        callback(inserted, updated, deleted)
    }
}
