import Foundation

/// A value guarded by a lock: the stack's stand-in for `Synchronization.Mutex`.
///
/// `Mutex` on Linux waits on a futex inside the standard library, which ThreadSanitizer cannot
/// see, so every guarded access would be reported as a race. This lock is a pthread mutex
/// (`NSLock`), which ThreadSanitizer understands, so `scripts/run-tsan` reports only real races.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// Guards `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
