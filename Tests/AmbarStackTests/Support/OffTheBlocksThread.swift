import Foundation

/// Runs `body` on a thread of its own and waits for its result: code that runs at the same time
/// as the caller's block, not inside it. The values cross threads unchecked on purpose — the
/// tests that use it check that objects refuse exactly this.
func offTheBlocksThread<T>(_ body: @escaping () -> T) -> T {
    let handoff = ThreadHandoff(body)
    let thread = Thread { handoff.run() }
    thread.start()
    return handoff.wait()
}

/// A body and its result, passed to another thread and back.
private final class ThreadHandoff<T>: @unchecked Sendable {
    private let body: () -> T
    private var result: T?
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping () -> T) { self.body = body }

    func run() {
        result = body()
        done.signal()
    }

    /// The body's result, once its thread has run it (it always does: the body cannot throw).
    func wait() -> T {
        done.wait()
        guard let result else { preconditionFailure("the thread signalled before it stored a result") }
        return result
    }
}
