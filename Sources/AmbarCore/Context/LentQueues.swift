/// Which contexts' queues the current block may act for, besides its own.
///
/// ``ManagedObjectContext/performAndWait(_:)`` blocks its caller until the block has run on the
/// context's queue. While it does, the caller's queue can run nothing else, so the block may act
/// for it: a private child of the main context that saves into its parent, or faults through it,
/// while the main thread waits on the child, runs the parent's part at once instead of waiting
/// for the main queue — which is waiting for it (Core Data's `performBlockAndWait` is re-entrant
/// the same way). Asynchronous ``ManagedObjectContext/perform(_:)`` lends nothing.
enum LentQueues {
    /// The main queue's marker (context identifiers start at 1).
    static let main: UInt64 = 0

    /// Queues lent to the current block by the callers waiting for it.
    @TaskLocal static var current: Set<UInt64> = []
    /// The queue of the block running now (its context's identifier, or ``main``).
    @TaskLocal static var running: UInt64?
}
