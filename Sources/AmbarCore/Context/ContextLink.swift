import Synchronization

/// The one object through which a context's managed objects reach it.
///
/// Every object holds its context's link strongly and the link holds the context weakly, so an
/// object does not keep its context alive and reads `nil` once the context is gone, as with a
/// weak reference of its own. Making an object then costs one plain retain of the link: a weak
/// reference per object registered itself in the context's side table (and retained and released
/// the context through it), which was a twentieth of a large fetch.
///
/// The link also answers, without loading the context, whether the context still exists and
/// whether the caller is on its queue: a set on an object inserted and not announced yet (an
/// importer's) needs nothing else, and loading the context (a weak load, then a release, both
/// through its side table) was a twentieth of an import.
final class ContextLink {
    /// The context; `nil` once it is gone. Set once, while the context is made.
    private(set) weak var context: ManagedObjectContext?
    /// The context's queue, set with it.
    private(set) var queue = QueueTicket(marker: .max)
    private let open = Atomic<Bool>(false)

    init() {}

    /// Links `context`, at the end of its initializer (before anything else can see it).
    func attach(_ context: ManagedObjectContext) {
        self.context = context
        queue = context.queueTicket
        open.store(true, ordering: .releasing)
    }

    /// Marks the context gone, from its deinitializer.
    func detach() { open.store(false, ordering: .releasing) }

    /// Whether the context still exists.
    var isOpen: Bool { open.load(ordering: .acquiring) }
}
