import AmbarStack
import Foundation

extension ModelContext {
    /// The store's transactions that `descriptor` matches, oldest first: every save of every
    /// context of every process sharing the store (SwiftData's `fetchHistory(_:)`, on Ambar's
    /// ledger).
    ///
    /// ```swift
    /// let after = lastToken   // a DefaultHistoryToken kept from the last fetch
    /// for transaction in try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(
    ///     predicate: #Predicate { $0.token > after })) {
    ///     lastToken = transaction.token
    /// }
    /// ```
    ///
    /// The predicate runs on each transaction in memory.
    ///
    /// - Throws: ``SwiftDataError/historyTokenExpired`` when the predicate asks for transactions
    ///   that were deleted (``deleteHistory(_:)`` or the store's retention): refetch what you show,
    ///   and continue from the newest token. ``SwiftDataError/Code/fetchFailed`` with the store's
    ///   error.
    public func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> [T] {
        guard T.self == DefaultHistoryTransaction.self else {
            throw SwiftDataError(.fetchFailed, "the history has transactions of type DefaultHistoryTransaction, not \(T.self)")
        }
        let coordinator = container.coordinator
        let store = coordinator.storeIdentifier
        let summary: HistorySummary
        do {
            summary = try coordinator.historySummary()
        } catch {
            throw SwiftDataError(.fetchFailed, "the store's history could not be read", cause: error)
        }
        let predicate = descriptor.predicate
        // A transaction that was deleted, which the predicate would take, means the caller's token
        // is older than what the ledger keeps.
        if summary.purgedThrough > 0, let predicate {
            let gone = DefaultHistoryTransaction(
                changes: [], token: DefaultHistoryToken(summary.purgedThrough, store: store), author: nil, timestamp: .distantPast, processIdentifier: "")
            if let probe = gone as? T, try predicate.evaluate(probe) { throw SwiftDataError.historyTokenExpired }
        }
        var result: [T] = []
        var after = summary.purgedThrough
        let limit = descriptor.fetchLimit.map { max($0, 0) }
        while limit.map({ result.count < $0 }) ?? true {
            let page: [AmbarStack.HistoryTransaction]
            do {
                page = try coordinator.history(after: after, limit: 500)
            } catch AmbarError.historyExpired(_, _) {
                throw SwiftDataError.historyTokenExpired
            } catch {
                throw SwiftDataError(.fetchFailed, "the store's history could not be read", cause: error)
            }
            for transaction in page {
                guard let typed = container.historyTransaction(transaction, store: store) as? T else { continue }
                if let predicate, try !predicate.evaluate(typed) { continue }
                result.append(typed)
                if let limit, result.count >= limit { break }
            }
            guard let last = page.last else { break }
            after = last.token
        }
        return result
    }

    /// Deletes the store's transactions through the newest one `descriptor` matches (the ledger
    /// is deleted from its start: those before it go too), except what a durable consumer or a
    /// sharing process has not read yet (SwiftData's `deleteHistory(_:)`).
    ///
    /// - Throws: ``SwiftDataError/Code/fetchFailed`` or ``SwiftDataError/Code/saveFailed`` with
    ///   the store's error.
    public func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws {
        guard let newest = try fetchHistory(descriptor).last as? DefaultHistoryTransaction else { return }
        do {
            _ = try container.coordinator.purgeHistory(through: newest.token.tokenValue)
        } catch {
            throw SwiftDataError(.saveFailed, "the history through \(newest.token) could not be deleted", cause: error)
        }
    }
}
