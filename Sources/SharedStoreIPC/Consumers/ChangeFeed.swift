import AmbarCore
import AmbarDataStack
import Dispatch
import Foundation

/// Every ledger transaction after a token, as an `AsyncSequence` that waits for new ones: a change
/// stream whose position is kept by whoever reads it (an HTTP client's `Last-Event-ID`, a file),
/// not in the store.
///
/// It yields the ledger's transactions in token order, all of them (every process's, and the empty
/// markers maintenance writes), a page at a time, and then waits, woken by the sharing layer's
/// doorbells (and reading the ledger every `checkInterval` anyway). Reading again after the last
/// token seen gives exactly the transactions that followed it: no gap, no repeat. When the history
/// after the token was purged it yields ``Event/historyExpired(_:)`` and ends. When its position is
/// past the ledger's head (the store was put back to an earlier state by other means than Ambar's
/// restore, and the next tokens will name other transactions) it throws
/// `AmbarError.positionAheadOfLedger` (with an empty consumer name) at its next read that finds
/// nothing, instead of waiting for them.
///
/// ```swift
/// for try await event in sync.changes(after: lastSeen) {
///     guard case .transactions(let page) = event else { break }   // expired: reconcile, start again
///     for transaction in page { try send(transaction); lastSeen = transaction.token }
/// }
/// ```
///
/// For work that must resume by itself, exactly once, use a ``ChangeConsumer`` instead.
public struct ChangeFeed: AsyncSequence, Sendable {
    /// What a feed yields.
    public enum Event: Sendable, Hashable {
        /// The next transactions, in token order (never empty).
        case transactions([HistoryTransaction])
        /// The history after the feed's position was purged; the feed ends.
        case historyExpired(HistoryExpiry)
    }

    /// What the sequence yields.
    public typealias Element = Event
    let coordinator: PersistentStoreCoordinator
    let signal: LedgerSignal
    let after: Int64
    let pageSize: Int
    let checkInterval: Duration

    /// An iterator from the feed's token.
    public func makeAsyncIterator() -> Iterator {
        Iterator(feed: self, position: after)
    }

    /// Reads the ledger after its position; one per reader.
    public struct Iterator: AsyncIteratorProtocol {
        let feed: ChangeFeed
        var position: Int64
        var ended = false

        /// The next page of transactions, waiting for one to commit; `nil` once the task is
        /// cancelled or after an expiry. Throws the store's errors, and
        /// `AmbarError.positionAheadOfLedger` for a position past the ledger's head.
        public mutating func next() async throws -> Event? {
            while !ended && !Task.isCancelled {
                let rings = feed.signal.rings
                let (coordinator, after, limit) = (feed.coordinator, position, feed.pageSize)
                // The page, and after an empty one the ledger's head: a head behind the position
                // means the store was put back to an earlier state.
                let page: Result<(transactions: [HistoryTransaction], head: Int64?), AmbarError> = await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        continuation.resume(
                            returning: Result(catching: { () throws(AmbarError) in
                                let transactions = try coordinator.history(after: after, limit: limit)
                                return (transactions, transactions.isEmpty ? try coordinator.currentHistoryToken() : nil)
                            }))
                    }
                }
                switch page {
                case .success(let read) where !read.transactions.isEmpty:
                    position = read.transactions[read.transactions.count - 1].token
                    return .transactions(read.transactions)
                case .success(let read):
                    if let head = read.head, head < after {
                        ended = true
                        throw AmbarError.positionAheadOfLedger(consumer: "", position: after, head: head)
                    }
                    await feed.signal.wait(after: rings, timeout: feed.checkInterval)
                case .failure(.historyExpired(_, let purgedThrough)):
                    ended = true
                    let head = try coordinator.currentHistoryToken()
                    return .historyExpired(HistoryExpiry(consumer: "", position: after, purgedThrough: purgedThrough, head: head))
                case .failure(let error):
                    throw error
                }
            }
            return nil
        }
    }
}

extension SharedStoreSync {
    /// The ledger's transactions after `token`, as they commit (see ``ChangeFeed``).
    ///
    /// - Parameters:
    ///   - token: The last token already seen (0 for the whole history the ledger holds).
    ///   - pageSize: The most transactions one event carries.
    ///   - checkInterval: How often the ledger is read when no doorbell rang.
    public func changes(after token: Int64, pageSize: Int = 100, checkInterval: Duration = .seconds(2)) -> ChangeFeed {
        ChangeFeed(coordinator: coordinator, signal: ledgerSignal, after: token, pageSize: max(1, pageSize), checkInterval: checkInterval)
    }
}
