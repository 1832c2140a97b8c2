import AmbarCore

/// SQL that reads relationships, the same for every backend.
package enum RelationshipSQL {
    /// `SELECT <key>, <entity> …` of the destinations of a to-many relationship of one owner, in
    /// stored order (an ordered relationship's positions first, then primary keys); the owner's
    /// key is the parameter `placeholder`. `nil` for relationships that are not stored that way.
    package static func destinations(of relationship: ResolvedRelationship, destinationRoot: String, placeholder: String) -> String? {
        switch relationship.mapping {
        case .inverseForeignKey(let root, let column):
            let order = relationship.orderColumn.map { "\(quoted($0)) IS NULL, \(quoted($0)), " } ?? ""
            return "SELECT Z_PK, Z_ENT FROM \(quoted(root)) WHERE \(quoted(column)) = \(placeholder) ORDER BY \(order)Z_PK"
        case .joinTable(let table, let own, let other):
            let order = relationship.orderColumn.map { "j.\(quoted($0)) IS NULL, j.\(quoted($0)), " } ?? ""
            return
                "SELECT d.Z_PK, d.Z_ENT FROM \(quoted(table)) AS j JOIN \(quoted(destinationRoot)) AS d ON d.Z_PK = j.\(other) WHERE j.\(own) = \(placeholder) ORDER BY \(order)d.Z_PK"
        case .foreignKey, .transient:
            return nil
        }
    }
}
