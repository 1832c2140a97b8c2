/// Describes an entity: a kind of managed object, its attributes, relationships, parent entity
/// and uniqueness constraints.
public struct EntityDescription: Sendable, Hashable {
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
    /// Groups of property names whose combined values must be unique among the entity's objects:
    /// attributes, and to-one relationships (compared by the object they point to).
    public var uniquenessConstraints: [[String]]
    /// The entity's name in an earlier model version, when it was renamed: lightweight migration
    /// then keeps its rows (Core Data's renaming identifier).
    public var renamingIdentifier: String?
    /// Indexes over several properties (Core Data's compound fetch indexes), each a list of
    /// attribute or to-one relationship names in index order. Single attributes can also be
    /// indexed with ``AttributeDescription/isIndexed``.
    public var indexes: [[String]]
    /// Fetched properties: read-only, evaluated on access (see ``FetchedPropertyDescription``).
    public var fetchedProperties: [FetchedPropertyDescription]

    /// Creates an entity description from its parts.
    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        uniquenessConstraints: [[String]] = [], renamingIdentifier: String? = nil,
        indexes: [[String]] = [], fetchedProperties: [FetchedPropertyDescription] = []
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.renamingIdentifier = renamingIdentifier
        self.indexes = indexes
        self.fetchedProperties = fetchedProperties
    }

    /// Creates an entity description from a list of properties (see ``PropertyDescription``).
    public init(
        _ name: String, parent: String? = nil, isAbstract: Bool = false,
        properties: [PropertyDescription] = [], uniquenessConstraints: [[String]] = [],
        renamingIdentifier: String? = nil, indexes: [[String]] = []
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
            renamingIdentifier: renamingIdentifier, indexes: indexes)
    }
}

extension EntityDescription: Codable {
    enum CodingKeys: String, CodingKey {
        case name, parent, isAbstract, attributes, relationships, uniquenessConstraints, renamingIdentifier
        case indexes, fetchedProperties
    }

    /// Decodes the description, taking the fields added after the first release as absent
    /// (their defaults) when a stored model does not have them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try c.decode(String.self, forKey: .name), parent: try c.decodeIfPresent(String.self, forKey: .parent),
            isAbstract: try c.decode(Bool.self, forKey: .isAbstract),
            attributes: try c.decode([AttributeDescription].self, forKey: .attributes),
            relationships: try c.decode([RelationshipDescription].self, forKey: .relationships),
            uniquenessConstraints: try c.decode([[String]].self, forKey: .uniquenessConstraints),
            renamingIdentifier: try c.decodeIfPresent(String.self, forKey: .renamingIdentifier),
            indexes: try c.decodeIfPresent([[String]].self, forKey: .indexes) ?? [],
            fetchedProperties: try c.decodeIfPresent([FetchedPropertyDescription].self, forKey: .fetchedProperties) ?? [])
    }

    /// Encodes the fields added after the first release only when set, so that the
    /// ``ManagedObjectModel/versionHash`` of a model that does not use them is unchanged.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(parent, forKey: .parent)
        try c.encode(isAbstract, forKey: .isAbstract)
        try c.encode(attributes, forKey: .attributes)
        try c.encode(relationships, forKey: .relationships)
        try c.encode(uniquenessConstraints, forKey: .uniquenessConstraints)
        try c.encodeIfPresent(renamingIdentifier, forKey: .renamingIdentifier)
        if !indexes.isEmpty { try c.encode(indexes, forKey: .indexes) }
        if !fetchedProperties.isEmpty { try c.encode(fetchedProperties, forKey: .fetchedProperties) }
    }
}
