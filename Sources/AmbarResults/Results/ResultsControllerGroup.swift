import AmbarCore

/// Several results controllers managed together, each with its own change handler
/// (BBLCoreDataKit's `BBLFetchedObjectController`). Use it on the controllers' context queue.
///
/// ``start()`` fetches every controller and replays its current objects to its handler as
/// `.insert` changes, so a handler builds its view from one code path; later changes follow as
/// they happen. ``stop()`` silences the handlers; ``clear()`` forgets the controllers.
public final class ResultsControllerGroup {
    /// Receives a controller's changes.
    public typealias Handler = ([ResultsChange]) -> Void

    private struct Entry {
        let start: () throws(AmbarError) -> Void
        let stop: () -> Void
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    private var order: [ObjectIdentifier] = []
    private var inProgress: [ObjectIdentifier: Set<ManagedObjectID>] = [:]

    /// An empty group.
    public init() {}

    /// Adds `controller` with `handler`; nothing happens until ``start()``.
    public func add<T: ManagedObject>(_ controller: FetchedResultsController<T>, handler: @escaping Handler) {
        let key = ObjectIdentifier(controller)
        if entries[key] == nil { order.append(key) }
        entries[key] = Entry(
            start: { () throws(AmbarError) in
                controller.onChange = handler
                try controller.performFetch()
                var replay: [ResultsChange] = []
                for (s, section) in controller.sections.enumerated() {
                    for (r, object) in section.objects.enumerated() {
                        replay.append(.insert(object.objectID, at: ResultsIndexPath(row: r, section: s)))
                    }
                }
                if !replay.isEmpty { handler(replay) }
            },
            stop: { controller.onChange = nil })
    }

    /// Fetches every controller, replays its objects as inserts, and starts reporting changes.
    public func start() throws(AmbarError) {
        for key in order { try entries[key]?.start() }
    }

    /// Stops reporting changes (the controllers stay in the group).
    public func stop() {
        for key in order { entries[key]?.stop() }
    }

    /// Stops and forgets every controller.
    public func clear() {
        stop()
        entries = [:]
        order = []
        inProgress = [:]
    }

    /// The number of controllers in the group.
    public var count: Int { order.count }

    /// Marks `id` as being worked on (or no longer) for `controller`, e.g. while a row shows a spinner.
    public func setObjectID<T: ManagedObject>(_ id: ManagedObjectID, inProgress: Bool, on controller: FetchedResultsController<T>) {
        let key = ObjectIdentifier(controller)
        if inProgress { self.inProgress[key, default: []].insert(id) } else { self.inProgress[key]?.remove(id) }
    }

    /// Whether `id` is marked as being worked on for `controller`.
    public func isInProgress<T: ManagedObject>(_ id: ManagedObjectID, on controller: FetchedResultsController<T>) -> Bool {
        inProgress[ObjectIdentifier(controller)]?.contains(id) ?? false
    }
}
