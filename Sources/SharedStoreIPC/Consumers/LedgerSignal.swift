import AmbarCore
import AmbarDataStack

/// Rings whoever waits for the ledger to move: the sharing layer rings it when it sees new
/// transactions (a doorbell, a ledger check, or a save of this process), and consumers wait on it
/// between reads. A ring is only a hint to read now; waiters read the ledger either way after
/// their timeout, so a lost ring costs at most that long.
///
/// Rings are counted: a waiter says which count it last saw, and a ring that came after that,
/// even before it started waiting, ends its wait at once.
final class LedgerSignal: Sendable {
    private struct State {
        var rings: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let state = Locked(State())

    /// How many times it rang so far.
    var rings: UInt64 { state.withLock { $0.rings } }

    /// Wakes every waiter.
    func ring() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.rings &+= 1
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// Returns once it rang after `seen` rings, after `timeout`, or when the task is cancelled,
    /// whichever comes first.
    func wait(after seen: UInt64, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForRing(after: seen) }
            // try?: a sleep throws only when cancelled, which ends the wait as the timeout does
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForRing(after seen: UInt64) async {
        let id = state.withLock { s -> UInt64 in
            s.nextWaiter &+= 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.rings != seen || Task.isCancelled { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
