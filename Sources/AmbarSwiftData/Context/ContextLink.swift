import AmbarStack
import Foundation

/// What a context's models hold instead of the context: its Ambar context, its container, and
/// the context itself, weakly.
///
/// A context keeps the models it has handed out (each managed object holds its model, as the
/// Ambar context holds its managed objects), so a model must not keep its context: the context
/// could never go. A model keeps the work underneath instead — the Ambar context, with its
/// queue and objects — and when its context is gone (code that fetched through a context of
/// its own and kept only the models), the link makes a successor over the same Ambar context,
/// which the model then answers to (``PersistentModel/modelContext`` included). A successor
/// does not keep the models it makes, so nothing holds itself.
///
/// Each model holds its context's one link: an ordinary retain, where a weak reference of its
/// own would cost every model made and freed two updates of the context's side table.
final class ContextLink: @unchecked Sendable {  // `context` is set once, before the link is shared; `successor` under `lock`
    /// The context, while it exists.
    private(set) weak var context: ModelContext?
    /// The Ambar context underneath, kept while a model uses it.
    let managedContext: ManagedObjectContext
    let container: ModelContainer
    /// The queue of the Ambar context's objects.
    let queue: QueueTicket
    private let lock = NSLock()
    private var successor: ModelContext?

    init(container: ModelContainer, managedContext: ManagedObjectContext) {
        self.container = container
        self.managedContext = managedContext
        self.queue = managedContext.queueTicket
    }

    /// Points the link at its context (once, as the context is made).
    func connect(_ context: ModelContext) { self.context = context }

    /// The context the models answer to: their own while it exists, else the successor.
    var current: ModelContext {
        if let context { return context }
        return lock.withLock {
            if let successor { return successor }
            let made = ModelContext(container: container, wrapping: managedContext, autosaves: false, keepsModels: false)
            successor = made
            return made
        }
    }
}
