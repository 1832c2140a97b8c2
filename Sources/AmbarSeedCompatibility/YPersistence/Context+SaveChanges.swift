import AmbarCore
import AmbarDataStack
import AmbarResults

extension ManagedObjectContext {
    /// Saves this context and then its ancestors, asynchronously (Y—Persistence's `saveChanges`).
    /// A context without changes completes with `nil` and stops: its parent is not saved. The
    /// completion runs once, on the queue of the last context saved, with the first error if any.
    public func saveChanges(_ completion: (@Sendable (AmbarError?) -> Void)? = nil) {
        enqueue {
            guard self.hasChanges else {
                completion?(nil)
                return
            }
            do throws(AmbarError) {
                try self.save()
            } catch {
                completion?(error)
                return
            }
            if let parent = self.parent { parent.saveChanges(completion) } else { completion?(nil) }
        }
    }

    /// Saves this context (when it has changes) and then each ancestor, waiting for each
    /// (Y—Persistence's `saveChangesAndWait`). Unlike ``saveChanges(_:)``, a context without
    /// changes still goes on to its parent. Stops at, and throws, the first error.
    public func saveChangesAndWait() throws(AmbarError) {
        try performAndWait { () throws(AmbarError) in
            if hasChanges { try save() }
        }
        try parent?.saveChangesAndWait()
    }
}
