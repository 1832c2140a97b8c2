import AmbarStack
import Foundation

extension ModelContainer {
    /// `transaction` as SwiftData presents it: the changes of the schema's models.
    func historyTransaction(_ transaction: AmbarStack.HistoryTransaction, store: String) -> DefaultHistoryTransaction {
        DefaultHistoryTransaction(
            changes: schema.types.flatMap { $0.historyChanges(in: transaction) },
            token: DefaultHistoryToken(transaction.token, store: store), author: transaction.author, timestamp: transaction.timestamp,
            processIdentifier: String(transaction.processID))
    }
}
