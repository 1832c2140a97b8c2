import Foundation

/// A value sent to or read from a database server.
package enum SQLServerValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    /// An exact decimal, as its text (PostgreSQL `numeric`).
    case numeric(String)
    case boolean(Bool)
    case integerArray([Int64])
    case textArray([String])
}

/// The rows a statement returned and how many rows it changed.
package struct SQLServerResult: Sendable {
    /// The rows, each the values of its columns in order.
    package var rows: [[SQLServerValue]]
    /// The rows inserted, updated or deleted (0 for other statements).
    package var affectedRows: Int

    package init(rows: [[SQLServerValue]], affectedRows: Int) {
        self.rows = rows
        self.affectedRows = affectedRows
    }
}
