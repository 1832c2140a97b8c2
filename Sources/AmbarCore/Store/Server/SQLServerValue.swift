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
    /// One column's values for many rows, NULLs among them (a many-row insert's `unnest`).
    case column(SQLServerColumn)
}

/// The values of one column for many rows, each array of one type, with NULLs: sent as one
/// array parameter (`bigint[]`, `double precision[]`, `text[]`, `bytea[]`).
package enum SQLServerColumn: Sendable, Hashable {
    case integers([Int64?])
    case reals([Double?])
    case texts([String?])
    case blobs([Data?])
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
