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
public struct RelationshipDescription: Sendable, Hashable {
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
    /// Whether a to-many relationship keeps its destinations in an order (Core Data's *ordered*):
    /// the order is stored, kept through saves and merges, and read and changed with the ordered
    /// API (``ManagedObject/orderedObjects(forKey:)`` and its companions).
    public var isOrdered: Bool
    /// Whether the relationship lives in memory only (Core Data's *transient*): never stored,
    /// empty again when the object is turned into a fault or fetched anew.
    public var isTransient: Bool
    /// For a to-many relationship: the fewest destinations a saved object may have (0: no limit).
    public var minCount: Int
    /// For a to-many relationship: the most destinations a saved object may have (0: no limit).
    public var maxCount: Int

    /// Creates a relationship description.
    public init(
        name: String, destination: String, inverse: String? = nil, isToMany: Bool = false,
        deleteRule: DeleteRule = .nullify, isOptional: Bool = true, renamingIdentifier: String? = nil,
        isOrdered: Bool = false, isTransient: Bool = false, minCount: Int = 0, maxCount: Int = 0
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.renamingIdentifier = renamingIdentifier
        self.isOrdered = isOrdered
        self.isTransient = isTransient
        self.minCount = minCount
        self.maxCount = maxCount
    }
}

extension RelationshipDescription: Codable {
    enum CodingKeys: String, CodingKey {
        case name, destination, inverse, isToMany, deleteRule, isOptional, renamingIdentifier
        case isOrdered, isTransient, minCount, maxCount
    }

    /// Decodes the description, taking the fields added after the first release as absent
    /// (their defaults) when a stored model does not have them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try c.decode(String.self, forKey: .name), destination: try c.decode(String.self, forKey: .destination),
            inverse: try c.decodeIfPresent(String.self, forKey: .inverse), isToMany: try c.decode(Bool.self, forKey: .isToMany),
            deleteRule: try c.decode(DeleteRule.self, forKey: .deleteRule), isOptional: try c.decode(Bool.self, forKey: .isOptional),
            renamingIdentifier: try c.decodeIfPresent(String.self, forKey: .renamingIdentifier),
            isOrdered: try c.decodeIfPresent(Bool.self, forKey: .isOrdered) ?? false,
            isTransient: try c.decodeIfPresent(Bool.self, forKey: .isTransient) ?? false,
            minCount: try c.decodeIfPresent(Int.self, forKey: .minCount) ?? 0,
            maxCount: try c.decodeIfPresent(Int.self, forKey: .maxCount) ?? 0)
    }

    /// Encodes the fields added after the first release only when set, so that the
    /// ``ManagedObjectModel/versionHash`` of a model that does not use them is unchanged.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(destination, forKey: .destination)
        try c.encodeIfPresent(inverse, forKey: .inverse)
        try c.encode(isToMany, forKey: .isToMany)
        try c.encode(deleteRule, forKey: .deleteRule)
        try c.encode(isOptional, forKey: .isOptional)
        try c.encodeIfPresent(renamingIdentifier, forKey: .renamingIdentifier)
        if isOrdered { try c.encode(true, forKey: .isOrdered) }
        if isTransient { try c.encode(true, forKey: .isTransient) }
        if minCount != 0 { try c.encode(minCount, forKey: .minCount) }
        if maxCount != 0 { try c.encode(maxCount, forKey: .maxCount) }
    }
}
