import Foundation

/// A page of the ledger with the stored rows its reader asked for, read in one transaction where
/// the backend can (``PersistentStore/ledgerPage(after:limit:rowsOf:)``).
package struct LedgerPage: Sendable {
    /// The transactions, in token order.
    let transactions: [HistoryTransaction]
    /// The rows asked for that still exist; nil when none were asked for.
    let rows: [StoreRow]?

    /// Made from its parts, by the modules that read and write stores.
    package init(transactions: [HistoryTransaction], rows: [StoreRow]?) {
        self.transactions = transactions
        self.rows = rows
    }
}
