import AmbarCore
import Foundation

/// The SQL dialect a query is compiled for.
package enum SQLDialect: Sendable {
    /// SQLite, with the functions and collation every store connection registers
    /// (`ambar_fold`, `ambar_text`, `ambar_deccmp`, `ambar_decimal`).
    case sqlite
    /// PostgreSQL: text columns in the byte-wise "C" collation, decimals as `numeric`; what SQL
    /// cannot say exactly (folded text, text operators) is decided by the client (``ClientTest``).
    case postgres
}

/// A parameter of a compiled query.
package enum BoundValue: Sendable {
    /// A value, in the form the store keeps.
    case scalar(StoredScalar)
    /// A decimal, bound as text and cast to `numeric` (PostgreSQL).
    case decimal(String)
    /// Primary keys, bound as one `bigint[]` (PostgreSQL).
    case integers([Int64])
    /// The distinct non-null texts of a column that pass a test, bound as one `text[]`: the
    /// client decides text predicates with the very code in-memory evaluation runs (PostgreSQL).
    case clientSet(ClientTest)
    /// The distinct non-null texts of a column (`text[]`) paired with their rank (`bigint[]`) in
    /// an order the client decides; two parameters (PostgreSQL).
    case clientRanks(ClientRanking)
    /// Placeholder for the second half of a ``clientRanks(_:)`` pair.
    case clientRanksSecondHalf
}

/// A test on the values of one text column, decided in Swift.
package struct ClientTest: Sendable {
    /// The table and column whose distinct values are tested.
    package let table: String
    package let column: String
    /// Whether a value passes; throws when it cannot be decided (a runaway `MATCHES`).
    package let test: @Sendable (String) throws(AmbarError) -> Bool
}

/// An order on the values of one text column, decided in Swift (folded text).
package struct ClientRanking: Sendable {
    package let table: String
    package let column: String
    package let options: TextOptions
}
