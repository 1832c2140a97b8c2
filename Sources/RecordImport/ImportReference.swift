import AmbarCore

/// The related objects one line names for one relationship: each by the value of its key
/// attribute (`--relate RELATIONSHIP=KEY`) or, without `--relate`, by its object URI
/// (`ambar://…`, as `sync-agent fetch --json` prints it).
public enum ImportReference: Sendable, Equatable {
    /// A to-one relationship's destination; `nil` (JSON null) clears it.
    case one(AttributeValue?)
    /// A to-many relationship's destinations, replacing the ones it had (in order for an ordered
    /// relationship).
    case many([AttributeValue])
}

/// What a relationship of the imported entity points to, and how a line names its destinations.
public struct ImportRelationshipTarget: Sendable {
    /// The relationship's name.
    public let name: String
    /// The destination entity.
    public let destination: String
    /// Whether it is a to-many relationship.
    public let isToMany: Bool
    /// Whether it is an ordered to-many relationship.
    public let isOrdered: Bool
    /// The destination's attribute that a line's values are (`--relate`), or nil when a line
    /// names destinations by object URI.
    public let keyAttribute: AttributeDescription?
}
