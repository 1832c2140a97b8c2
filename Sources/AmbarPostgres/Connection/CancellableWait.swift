import AmbarCore

/// A result a task waits for that can also be given up on: the first of `finish(_:)` and the
/// waiting task's cancellation wins; the other is told it lost.
final class CancellableWait<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiter: CheckedContinuation<Value, any Error>?
    }

    private let state = Locked(State())

    /// Delivers `result`; false when the wait already ended (finished or given up).
    func finish(_ result: Result<Value, any Error>) -> Bool {
        let waiter = state.withLock { s -> CheckedContinuation<Value, any Error>?? in
            guard s.result == nil else { return .none }
            s.result = result
            defer { s.waiter = nil }
            return .some(s.waiter)
        }
        guard let waiter else { return false }
        waiter?.resume(with: result)
        return true
    }

    /// Waits for the result; throws `CancellationError` when the task is cancelled first.
    func value() async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { s -> Result<Value, any Error>? in
                    if let result = s.result { return result }
                    s.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            _ = finish(.failure(CancellationError()))
        }
    }
}
