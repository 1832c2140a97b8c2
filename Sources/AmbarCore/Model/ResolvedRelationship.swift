import Foundation

/// How a relationship is kept in the relational store.
package enum RelationshipMapping: Sendable, Hashable {
    /// A to-one: a column of the source's table holds the destination's primary key.
    case foreignKey(column: String)
    /// A to-many whose inverse is a to-one: the destination's table holds the source's key.
    case inverseForeignKey(destinationRoot: String, column: String)
    /// A to-many whose inverse is a to-many (or that has no inverse): a join table.
    case joinTable(table: String, ownColumn: String, otherColumn: String)
    /// A transient relationship: in memory only.
    case transient
}

/// One relationship with its inherited position and storage mapping resolved.
package struct ResolvedRelationship: Sendable {
    package let description: RelationshipDescription
    package let index: Int
    package let mapping: RelationshipMapping
    /// For a to-one whose destination has sub-entities: the column holding the destination's entity.
    package let entityColumn: String?
    package var name: String { description.name }
    package var isToMany: Bool { description.isToMany }
    /// Whether the relationship keeps its destinations in an order the store records.
    var isOrdered: Bool { description.isOrdered && description.isToMany && mapping != .transient }

    /// Where the store records the order of an ordered relationship: a column of the destination
    /// table (beside the inverse's foreign key) or of the join table.
    package var orderColumn: String? {
        guard isOrdered else { return nil }
        switch mapping {
        case .inverseForeignKey(_, let column): return "Z_FOK_\(column)"
        case .joinTable(_, let own, _): return "\(own)_order"
        case .foreignKey, .transient: return nil
        }
    }
}
