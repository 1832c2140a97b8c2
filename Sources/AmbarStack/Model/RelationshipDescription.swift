/// What happens to the destination objects when the source object is deleted.
public enum DeleteRule: String, Codable, Sendable, Hashable {
    /// The destinations stay; their inverse relationship to the deleted object is cleared.
    case nullify
    /// The destinations are deleted too.
    case cascade
    /// The delete is refused (the save throws) while the relationship is not empty.
    case deny
    /// Nothing happens to the destinations; their inverse may point at a deleted object.
    case noAction
}

/// Describes one relationship of an entity: its destination, cardinality, inverse and delete rule.
public struct RelationshipDescription: Codable, Sendable, Hashable {
    /// The relationship's name.
    public var name: String
    /// The name of the destination entity.
    public var destination: String
    /// The name of the inverse relationship on the destination entity, if any.
    public var inverse: String?
    /// Whether the relationship holds a set of objects (`true`) or at most one (`false`).
    public var isToMany: Bool
    /// What deleting the source does to the destinations.
    public var deleteRule: DeleteRule
    /// Whether a to-one relationship may be empty when the object is saved.
    public var isOptional: Bool
    /// The relationship's name in an earlier model version, when it was renamed: lightweight
    /// migration then keeps its links (Core Data's renaming identifier).
    public var renamingIdentifier: String?

    /// Creates a relationship description.
    public init(
        name: String, destination: String, inverse: String? = nil, isToMany: Bool = false,
        deleteRule: DeleteRule = .nullify, isOptional: Bool = true, renamingIdentifier: String? = nil
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.renamingIdentifier = renamingIdentifier
    }
}
