import Foundation

/// A column of an entity table (for an attribute or a to-one relationship).
package struct ColumnSpec: Sendable, Hashable {
    package let name: String
    package let sqlType: String
    package let isIndexed: Bool
}

/// A join table for a to-many relationship without a to-one inverse.
package struct JoinTableSpec: Sendable, Hashable {
    package let table: String
    package let sourceRoot: String
    package let destinationRoot: String
    /// The order columns (`src_order`, `dst_order`) for the sides that are ordered relationships.
    package var orderColumns: [String] = []
}
