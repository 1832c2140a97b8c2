import AmbarCore
import AmbarDataStack
import AmbarResults

extension ManagedObjectContext {
    /// Ambar's callback save: saves this context — a private-queue context synchronously, a
    /// main-queue one asynchronously — and, when `shouldPropagate`, each ancestor after it.
    /// `callback` runs exactly once, on the queue of the last context in the chain: `nil`, or the
    /// first error (the chain stops there). A context without changes calls back with `nil` at
    /// once and does not save its parent (Ambar 6.4's rule).
    public func save(shouldPropagate: Bool = true, callback: @escaping @Sendable (AmbarError?) -> Void = { _ in }) {
        let work: @Sendable () -> Void = {
            guard self.hasChanges else { return callback(nil) }
            do throws(AmbarError) {
                try self.save()
            } catch {
                return callback(error)
            }
            if shouldPropagate, let parent = self.parent {
                parent.save(shouldPropagate: true, callback: callback)
            } else {
                callback(nil)
            }
        }
        switch concurrencyType {
        case .mainQueue: enqueue(work)
        case .privateQueue: performAndWait(work)
        }
    }
}
