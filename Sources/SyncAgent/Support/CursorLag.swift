import AmbarCore
import AmbarDataStack
import Foundation

/// How far a ledger position (a durable consumer's, or a sharing process's) is behind the head, as
/// `sync-agent consumers`, `status` and the metrics report it.
struct CursorLag {
    /// Transactions committed after the position.
    let tokens: Int64
    /// Seconds since the oldest transaction after the position committed; 0 at the head or when
    /// that history was purged.
    let seconds: Double
    /// Whether the history after the position was purged: the consumer must reconcile.
    let expired: Bool

    /// The lag of a position at `token` when the ledger's head is `head`; reads one ledger
    /// transaction when the position is behind.
    init(token: Int64, head: Int64, _ coordinator: PersistentStoreCoordinator, now: Date) throws {
        tokens = max(0, head - token)
        guard token < head else {
            (seconds, expired) = (0, false)
            return
        }
        switch Result(catching: { () throws(AmbarError) in try coordinator.history(after: token, limit: 1) }) {
        case .success(let next): (seconds, expired) = (next.first.map { max(0, now.timeIntervalSince($0.timestamp)) } ?? 0, false)
        case .failure(.historyExpired): (seconds, expired) = (0, true)
        case .failure(let error): throw error
        }
    }
}
