import AmbarCore
import AmbarDataStack

/// The failure that ended sharing for good (the store file replaced under the process), and the
/// tasks waiting to hear of it. Thread-safe.
final class SharingFailure: Sendable {
    private struct State {
        var error: AmbarError?
        var finished = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<AmbarError?, Never>] = [:]
    }

    private let state = Locked(State())

    /// The failure, once there is one.
    var error: AmbarError? { state.withLock { $0.error } }

    /// Records `error` and wakes the waiters with it; false when a failure was recorded already.
    func fail(_ error: AmbarError) -> Bool {
        let waiters = state.withLock { s -> [CheckedContinuation<AmbarError?, Never>]? in
            guard s.error == nil, !s.finished else { return nil }
            s.error = error
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        guard let waiters else { return false }
        waiters.forEach { $0.resume(returning: error) }
        return true
    }

    /// Sharing stopped: waiters get nil, later ones the failure if there was one.
    func finish() {
        let waiters = state.withLock { s -> [CheckedContinuation<AmbarError?, Never>] in
            s.finished = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        waiters.forEach { $0.resume(returning: nil) }
    }

    /// Waits for the failure; nil when sharing stops first or the task is cancelled.
    func wait() async -> AmbarError? {
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate = state.withLock { s -> AmbarError?? in
                    if let error = s.error { return .some(error) }
                    if s.finished || Task.isCancelled { return .some(nil) }
                    s.waiters[id] = continuation
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }
}
