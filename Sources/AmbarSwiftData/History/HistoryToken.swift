import Foundation

/// A position in a store's history: SwiftData's `HistoryToken`.
public protocol HistoryToken: Comparable, Codable, Hashable, Sendable {}

/// A transaction's position in the store's ledger, in commit order: keep the last one you
/// handled (it is `Codable`) and fetch what came after it.
///
/// ```swift
/// let token = lastHandled   // a DefaultHistoryToken you stored
/// let newer = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(
///     predicate: #Predicate { $0.token > token }))
/// ```
public struct DefaultHistoryToken: HistoryToken, CustomStringConvertible {
    /// The ledger's token of the transaction.
    public let tokenValue: Int64
    /// The store the token belongs to.
    public let storeIdentifier: String

    init(_ tokenValue: Int64, store: String) {
        self.tokenValue = tokenValue
        self.storeIdentifier = store
    }

    /// Orders by position in the ledger.
    public static func < (lhs: DefaultHistoryToken, rhs: DefaultHistoryToken) -> Bool { lhs.tokenValue < rhs.tokenValue }

    /// "token 42".
    public var description: String { "token \(tokenValue)" }
}
