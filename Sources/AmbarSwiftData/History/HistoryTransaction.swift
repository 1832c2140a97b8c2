import AmbarStack
import Foundation

/// A transaction of a store's history: SwiftData's `HistoryTransaction`.
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    /// The kind of token that orders transactions.
    associatedtype TokenType: HistoryToken
    /// What the transaction changed.
    var changes: [HistoryChange] { get }
    /// Its position in the history.
    var token: TokenType { get }
    /// The author of the context that saved it (``ModelContext/author``), if any.
    var author: String? { get }
    /// When it committed.
    var timestamp: Date { get }
}

/// One saved transaction of the store, from any context of any process: what it inserted,
/// changed and deleted, in commit order (Ambar's ledger, as SwiftData's history presents it).
public struct DefaultHistoryTransaction: HistoryTransaction, CustomStringConvertible {
    /// The models inserted, changed and deleted (those of the container's schema).
    public let changes: [HistoryChange]
    /// Its position in the ledger.
    public let token: DefaultHistoryToken
    /// The saving context's author, if any.
    public let author: String?
    /// When it committed.
    public let timestamp: Date
    /// The saving process's ID.
    public let processIdentifier: String
    /// The store's identifier.
    public var storeIdentifier: String { token.storeIdentifier }
    /// The ledger token, as the transaction's identifier.
    public var transactionIdentifier: Int64 { token.tokenValue }
    /// The ledger token.
    public var id: Int64 { token.tokenValue }

    /// Transactions are equal when they are the same transaction of the same store.
    public static func == (lhs: DefaultHistoryTransaction, rhs: DefaultHistoryTransaction) -> Bool { lhs.token == rhs.token }

    /// Hashes the token.
    public func hash(into hasher: inout Hasher) { hasher.combine(token) }

    /// "token 42 by importer: 3 changes".
    public var description: String { "\(token)\(author.map { " by \($0)" } ?? ""): \(changes.count) changes" }
}

/// Which history transactions to fetch: SwiftData's `HistoryDescriptor`.
public struct HistoryDescriptor<T: HistoryTransaction>: @unchecked Sendable {  // Predicate is a value
    /// Which transactions (every one still in the ledger when `nil`).
    public var predicate: Predicate<T>?
    /// At most this many, oldest first (all when `nil`).
    public var fetchLimit: Int?

    /// The transactions `predicate` matches.
    public init(predicate: Predicate<T>? = nil) {
        self.predicate = predicate
    }
}
