import AmbarCore

/// Watches a fixed set of objects of one context and reports which of them changed or went away
/// — by local edits, merged saves, or saves of other processes merged into a shared main context
/// (Ambar's `ManagedSetMonitor`).
///
/// The callback runs on the context's queue, only when a watched object was updated or deleted.
/// Deleted objects leave the watched set.
public final class ManagedSetMonitor<T: ManagedObject> {
    /// Receives the watched objects that changed and the IDs of those deleted.
    public typealias Callback = (_ updated: Set<T>, _ deletedIDs: Set<ManagedObjectID>) -> Void

    /// The objects still watched.
    public private(set) var objects: Set<T>
    /// Their IDs.
    public var objectIDs: Set<ManagedObjectID> { Set(objects.map(\.objectID)) }
    /// Their context.
    public let context: ManagedObjectContext
    private let callback: Callback
    private var observation: ContextObservation?

    /// Watches `objects`, which must be non-empty and belong to one context.
    ///
    /// - Throws: ``AmbarError/invalidArgument(_:)`` for an empty set (the seed crashed) or objects
    ///   of several contexts.
    public init(objects: Set<T>, callback: @escaping Callback) throws(AmbarError) {
        guard let context = objects.first?.managedObjectContext else {
            throw .invalidArgument("a ManagedSetMonitor needs at least one object that belongs to a context")
        }
        guard objects.allSatisfy({ $0.managedObjectContext === context }) else {
            throw .invalidArgument("the objects of a ManagedSetMonitor must all belong to one context; use one monitor per context")
        }
        self.objects = objects
        self.context = context
        self.callback = callback
        let box = UncheckedBox(self)
        observation = context.observeObjectsDidChange { note in box.value?.handle(note) }
    }

    deinit { observation?.cancel() }

    /// Stops the reports.
    public func cancel() { observation?.cancel() }

    private func handle(_ note: ObjectsDidChangeNotification) {
        let watched = objectIDs
        let deleted = note.deleted.union(note.invalidated).intersection(watched)
        let changed = note.refreshedAll ? watched : note.updated.union(note.refreshed).intersection(watched)
        let updated = Set(objects.filter { changed.contains($0.objectID) && !deleted.contains($0.objectID) })
        guard !updated.isEmpty || !deleted.isEmpty else { return }
        objects = objects.filter { !deleted.contains($0.objectID) }
        callback(updated, deleted)
    }
}
