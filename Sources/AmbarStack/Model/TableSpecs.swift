import Foundation

/// A column of an entity table (for an attribute or a to-one relationship).
struct ColumnSpec: Sendable, Hashable {
    let name: String
    let sqlType: String
    let isIndexed: Bool
}

/// A join table for a to-many relationship without a to-one inverse.
struct JoinTableSpec: Sendable, Hashable {
    let table: String
    let sourceRoot: String
    let destinationRoot: String
    /// The order columns (`src_order`, `dst_order`) for the sides that are ordered relationships.
    var orderColumns: [String] = []
}
