import AmbarCore
import Foundation

/// Tasks waiting until a process holds a ledger token: each waits for one token, with a time
/// limit, and is resumed once (when the token is held, at its time limit, when its task is
/// cancelled, or when sharing stops).
///
/// The follower calls ``release(through:)`` whenever the token it holds through may have grown;
/// a waiter that registers after that call sees the token itself (``wait(for:timeout:held:)``
/// looks again once registered), so no release is missed.
final class MergeWaiters: Sendable {
    private struct Waiter {
        let token: Int64
        let continuation: CheckedContinuation<Bool, Never>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var next: UInt64 = 0
        var waiting: [UInt64: Waiter] = [:]
        var closed = false
    }

    private let state = Locked(State())

    /// Waits until `held()` reaches `token`, at most `timeout`. Returns whether it did; false at
    /// the time limit, when the task is cancelled, or after ``closeAll()``.
    func wait(for token: Int64, timeout: Duration, held: @escaping @Sendable () -> Int64) async -> Bool {
        if held() >= token { return true }
        let id = state.withLock { s -> UInt64 in
            s.next += 1
            return s.next
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let registered = state.withLock { s -> Bool in
                    guard !s.closed else { return false }
                    s.waiting[id] = Waiter(token: token, continuation: continuation)
                    return true
                }
                guard registered else { return continuation.resume(returning: false) }
                // A release between the first look and the registration is seen here.
                if held() >= token || Task.isCancelled { return resume(id, with: held() >= token) }
                let timer = Task { [weak self] in
                    // try?: cancelled once the waiter was resumed otherwise; it then finds nothing to resume
                    try? await Task.sleep(for: timeout)
                    self?.resume(id, with: false)
                }
                let started = state.withLock { s -> Bool in
                    guard s.waiting[id] != nil else { return false }
                    s.waiting[id]?.timer = timer
                    return true
                }
                if !started { timer.cancel() }
            }
        } onCancel: {
            resume(id, with: false)
        }
    }

    /// Resumes every waiter whose token is at most `merged`.
    func release(through merged: Int64) {
        let ready = state.withLock { s -> [Waiter] in
            let ids = s.waiting.filter { $0.value.token <= merged }.map(\.key)
            return ids.compactMap { s.waiting.removeValue(forKey: $0) }
        }
        for waiter in ready {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: true)
        }
    }

    /// Resumes every waiter with false, now and for good: sharing stopped.
    func closeAll() {
        let all = state.withLock { s -> [Waiter] in
            s.closed = true
            defer { s.waiting = [:] }
            return Array(s.waiting.values)
        }
        for waiter in all {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: false)
        }
    }

    private func resume(_ id: UInt64, with result: Bool) {
        guard let waiter = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume(returning: result)
    }
}
