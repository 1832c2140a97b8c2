import Foundation

/// A context's queue, as a value: whether the caller is on it (or acts for it, inside a
/// ``ManagedObjectContext/performAndWait(_:)`` called from it) can be asked without the context.
///
/// A layer above the context that does not own it (a SwiftData model, which must not keep its
/// context alive) asks this on every property access, where loading a weak reference to the
/// context would cost more than the read itself.
package struct QueueTicket: Sendable, Equatable {
    /// The context's identifier, or ``LentQueues/main`` for a main-queue context.
    let marker: UInt64

    /// Whether the caller is on the queue, as ``ManagedObjectContext/isOnQueue`` answers: the
    /// thread's mark of the block it runs first (``RunningBlockMarker``), then the queue's
    /// own answer, then the queues lent to the block.
    package var isCurrent: Bool {
        if marker == LentQueues.main {
            return Thread.isMainThread || DispatchQueue.getSpecific(key: ManagedObjectContext.mainQueueKey) == 1
                || LentQueues.current.contains(LentQueues.main)
        }
        // Inside the context's own block (the common case) the thread's mark says so at once.
        return RunningBlockMarker.current == marker || DispatchQueue.getSpecific(key: ManagedObjectContext.queueKey) == marker
            || LentQueues.current.contains(marker)
    }
}
