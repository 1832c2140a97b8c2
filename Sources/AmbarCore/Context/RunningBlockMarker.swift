#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The private-queue context whose block the current thread is running, kept in a thread-local
/// slot (`pthread_getspecific`) so that ``QueueTicket/isCurrent`` answers the common case — an
/// object touched inside its own context's block — with one load, before asking the dispatch
/// queue (`DispatchQueue.getSpecific`, a generic call through the Dispatch overlay, which was a
/// fifth of every attribute set in an import).
///
/// Only the thread running the block sees the mark: unlike a task-local value, a `Task` started
/// inside the block does not inherit it, so the fast answer is never given on another thread.
/// Code that the block itself runs on the same thread while it waits (another queue's `sync`)
/// sees it too; that code cannot run at the same time as the block, so it acts for it, as a
/// ``ManagedObjectContext/performAndWait(_:)`` lends its caller's queue.
enum RunningBlockMarker {
    /// The thread-local slot; `nil` when the system had no key to give (every check then takes
    /// the dispatch queue's answer).
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        return pthread_key_create(&key, nil) == 0 ? key : nil
    }()

    /// The marker of the block the current thread runs (a private-queue context's identifier),
    /// or 0 outside any.
    static var current: UInt64 {
        guard let key else { return 0 }
        return UInt64(UInt(bitPattern: pthread_getspecific(key)))
    }

    /// Marks the current thread as running a block of the context `marker` (non-zero) and
    /// returns the mark it replaces, to give to ``leave(restoring:)`` when the block ends.
    static func enter(_ marker: UInt64) -> UInt64 {
        guard let key else { return 0 }
        let previous = UInt64(UInt(bitPattern: pthread_getspecific(key)))
        _ = pthread_setspecific(key, UnsafeRawPointer(bitPattern: UInt(marker)))
        return previous
    }

    /// Puts back the mark ``enter(_:)`` replaced.
    static func leave(restoring previous: UInt64) {
        guard let key else { return }
        _ = pthread_setspecific(key, UnsafeRawPointer(bitPattern: UInt(previous)))
    }
}
