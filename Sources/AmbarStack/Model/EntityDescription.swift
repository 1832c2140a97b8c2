/// Describes an entity: a kind of managed object, its attributes, relationships, parent entity
/// and uniqueness constraints.
public struct EntityDescription: Codable, Sendable, Hashable {
    /// The entity's name, unique in its model.
    public var name: String
    /// The name of the parent entity, for entity inheritance. A sub-entity has every property of
    /// its parent, and fetches of the parent include it.
    public var parent: String?
    /// Whether the entity may not be instantiated itself (only its sub-entities).
    public var isAbstract: Bool
    /// The attributes the entity declares itself (inherited ones are not repeated).
    public var attributes: [AttributeDescription]
    /// The relationships the entity declares itself.
    public var relationships: [RelationshipDescription]
    /// Groups of attribute names whose combined values must be unique among the entity's objects.
    public var uniquenessConstraints: [[String]]
    /// The entity's name in an earlier model version, when it was renamed: lightweight migration
    /// then keeps its rows (Core Data's renaming identifier).
    public var renamingIdentifier: String?

    /// Creates an entity description from its parts.
    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        uniquenessConstraints: [[String]] = [], renamingIdentifier: String? = nil
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.renamingIdentifier = renamingIdentifier
    }

    /// Creates an entity description from a list of properties (see ``PropertyDescription``).
    public init(
        _ name: String, parent: String? = nil, isAbstract: Bool = false,
        properties: [PropertyDescription] = [], uniquenessConstraints: [[String]] = [],
        renamingIdentifier: String? = nil
    ) {
        var attributes: [AttributeDescription] = []
        var relationships: [RelationshipDescription] = []
        for property in properties {
            switch property {
            case .attributeDescription(let a): attributes.append(a)
            case .relationshipDescription(let r): relationships.append(r)
            }
        }
        self.init(
            name: name, parent: parent, isAbstract: isAbstract, attributes: attributes,
            relationships: relationships, uniquenessConstraints: uniquenessConstraints,
            renamingIdentifier: renamingIdentifier)
    }
}
