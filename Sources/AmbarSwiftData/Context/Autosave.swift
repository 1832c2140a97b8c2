import Foundation

/// A context that saves by itself (``ModelContext/autosaveEnabled``): after a change, once the
/// context's queue has nothing else to do, as SwiftData's main context saves after each turn of
/// the run loop. What an autosave cannot save stays unsaved, and the next explicit save throws why.
final class Autosave: @unchecked Sendable {  // the lock guards the flags
    private let lock = NSLock()
    private var enabled: Bool
    private var scheduled = false
    weak var context: ModelContext?

    init(isEnabled: Bool) { enabled = isEnabled }

    var isEnabled: Bool {
        get { lock.withLock { enabled } }
        set { lock.withLock { enabled = newValue } }
    }

    /// A change was made: schedules a save on the context's queue, unless one is scheduled.
    func changed() {
        let schedule = lock.withLock { () -> Bool in
            guard enabled, !scheduled else { return false }
            scheduled = true
            return true
        }
        guard schedule, let context else { return }
        context.managedContext.enqueue { [weak self] in
            guard let self, let context = self.context else { return }
            self.lock.withLock { self.scheduled = false }
            guard self.isEnabled, context.managedContext.hasChanges else { return }
            do {
                try context.save()
            } catch {
                // The changes stay unsaved; the next explicit save throws why.
                context.failures.record("autosave", error)
            }
        }
    }
}
