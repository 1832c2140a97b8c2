import AmbarCore
import AmbarDataStack
import AmbarResults
import Foundation

extension DataStack {
    /// A new private-queue child of the main context with the default (`.error`) merge policy,
    /// for background work that reaches the store through main (CoreDataStack's
    /// `concurrentContext()`). Save it with ``saveToDisk(context:completion:)``.
    public func concurrentContext() throws(AmbarError) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, parent: try mainContext, name: "\(name).concurrent")
        track(context)
        return context
    }

    /// Saves `context` (when given and not the main context), then the main context, to the
    /// store, one after the other on their own queues, without blocking the caller
    /// (CoreDataStack's `saveToDisk`). `completion` runs once on the main queue: `nil`, or the first
    /// error (the chain stops there; the contexts keep their changes).
    ///
    /// A child context's changes reach the store only when it is passed here. After
    /// ``deleteStore()``, `completion` gets ``AmbarError/storeDeleted`` at once, on the caller's
    /// thread (as the seed did; decision D4).
    public func saveToDisk(context: ManagedObjectContext? = nil, completion: (@Sendable (AmbarError?) -> Void)? = nil) {
        if isStoreDeleted {
            completion?(.storeDeleted)
            return
        }
        let main: ManagedObjectContext
        do { main = try mainContext } catch {
            completion?(error)
            return
        }
        let finish: @Sendable (AmbarError?) -> Void = { error in DispatchQueue.main.async { completion?(error) } }
        let saveMain: @Sendable () -> Void = {
            main.enqueue {
                do throws(AmbarError) {
                    try main.save()
                    finish(nil)
                } catch { finish(error) }
            }
        }
        guard let context, context !== main else { return saveMain() }
        context.enqueue {
            do throws(AmbarError) { try context.save() } catch { return finish(error) }
            saveMain()
        }
    }
}
