import Foundation

/// An entity with inherited properties resolved into fixed slots: what managed objects, the
/// store and predicates use at run time. Immutable and shared.
package final class EntityLayout: Sendable {
    package let name: String
    let description: EntityDescription
    package let rootName: String
    /// Attributes, inherited first; an object's values array follows this order.
    package let attributes: [AttributeDescription]
    package let attributeIndex: [String: Int]
    /// Relationships, inherited first.
    package let relationships: [ResolvedRelationship]
    package let relationshipIndex: [String: Int]
    /// This entity and every entity that inherits from it, directly or not.
    package let selfAndDescendants: [String]
    /// Uniqueness constraints, inherited first.
    package let uniquenessConstraints: [[String]]
    /// The names of the ancestors, nearest first.
    package let ancestors: [String]
    let objectClass: ManagedObject.Type
    /// The column of each attribute (`nil` for a transient one), in attribute order.
    package let attributeColumns: [String?]
    /// The column of each relationship (`nil` unless a stored to-one), in relationship order.
    package let relationshipColumns: [String?]
    /// The indexes of the attributes the store keeps (all but the transient ones).
    package let storedAttributes: [Int]
    /// The indexes of the transient attributes.
    let transientAttributes: [Int]
    /// The indexes of the derived attributes, with their parsed derivations.
    let derivedAttributes: [(index: Int, derivation: DerivedAttribute)]
    /// Fetched properties, inherited first.
    let fetchedProperties: [FetchedPropertyDescription]
    /// A null for every attribute: a fault's values before they load.
    let nullValues: [AttributeValue]
    /// The values a new object starts with: each attribute's default, coerced to its type.
    let insertValues: [AttributeValue]
    /// No destination for every relationship: an object's to-one slots before any is set.
    let noDestinations: [ManagedObjectID?]
    /// No loaded destinations for every relationship: an object's to-many slots before they load.
    let unloadedToMany: [Set<ManagedObjectID>?]
    /// The indexes of the to-many relationships.
    let toManyRelationships: [Int]
    /// The indexes of the attributes with validation rules.
    let validatedAttributes: [Int]
    /// The indexes of the stored attributes that must have a value (not optional).
    let requiredAttributes: [Int]
    /// The indexes of the to-many relationships with a minimum or maximum count.
    let countedToMany: [Int]
    /// The indexes of the to-one relationships that must have a destination (not optional).
    let requiredToOne: [Int]
    /// The scope of this entity's temporary object IDs.
    let temporaryScope: Unmanaged<ObjectIDScope>
    /// Attribute names compared one by one (cheaper than hashing for the few attributes most
    /// entities have; see ``attributeSlot(_:)``).
    private let attributeNames: [String]

    init(
        name: String, description: EntityDescription, rootName: String,
        attributes: [AttributeDescription], relationships: [ResolvedRelationship],
        selfAndDescendants: [String], uniquenessConstraints: [[String]], ancestors: [String],
        objectClass: ManagedObject.Type, attributeColumns: [String?], relationshipColumns: [String?],
        derivedAttributes: [(index: Int, derivation: DerivedAttribute)], fetchedProperties: [FetchedPropertyDescription]
    ) {
        self.name = name
        self.description = description
        self.rootName = rootName
        self.attributes = attributes
        self.attributeIndex = Dictionary(uniqueKeysWithValues: attributes.enumerated().map { ($1.name, $0) })
        self.relationships = relationships
        self.relationshipIndex = Dictionary(uniqueKeysWithValues: relationships.enumerated().map { ($1.name, $0) })
        self.selfAndDescendants = selfAndDescendants
        self.uniquenessConstraints = uniquenessConstraints
        self.ancestors = ancestors
        self.objectClass = objectClass
        self.attributeColumns = attributeColumns
        self.relationshipColumns = relationshipColumns
        self.storedAttributes = attributes.indices.filter { !attributes[$0].isTransient }
        self.transientAttributes = attributes.indices.filter { attributes[$0].isTransient }
        self.derivedAttributes = derivedAttributes
        self.fetchedProperties = fetchedProperties
        self.nullValues = Array(repeating: .null, count: attributes.count)
        self.insertValues = attributes.map { $0.defaultValue.coerced(to: $0.type) ?? .null }
        self.noDestinations = Array(repeating: nil, count: relationships.count)
        self.unloadedToMany = Array(repeating: nil, count: relationships.count)
        self.toManyRelationships = relationships.indices.filter { relationships[$0].isToMany }
        self.attributeNames = attributes.map(\.name)
        self.temporaryScope = ObjectIDScope.interned(entityName: name, storeIdentifier: "")
        self.validatedAttributes = attributes.indices.filter { !attributes[$0].validation.isEmpty }
        self.requiredAttributes = attributes.indices.filter { !attributes[$0].isOptional && !attributes[$0].isTransient }
        self.countedToMany = relationships.indices.filter {
            relationships[$0].isToMany && (relationships[$0].description.minCount > 0 || relationships[$0].description.maxCount > 0)
        }
        self.requiredToOne = relationships.indices.filter { !relationships[$0].isToMany && !relationships[$0].description.isOptional }
    }

    /// The index of the attribute named `name`. Typed properties (`@Managed`) look their
    /// attribute up on every access: for up to 16 attributes a scan whose comparisons mostly
    /// succeed or fail on the first word (short names are stored inline) beats hashing the name.
    @inline(__always)
    package func attributeSlot(_ name: String) -> Int? {
        guard attributeNames.count <= 16 else { return attributeIndex[name] }
        for i in attributeNames.indices where attributeNames[i] == name { return i }
        return nil
    }

    /// The column of the attribute at `index`, or an error saying it is transient.
    package func column(ofAttribute index: Int) throws(AmbarError) -> String {
        guard let column = attributeColumns[index] else {
            throw .invalidPredicate(
                "'\(name).\(attributes[index].name)' is transient: it is not in the store, so a fetch cannot filter or sort by it (filter the fetched objects in memory instead)"
            )
        }
        return column
    }

    /// The column of the stored to-one relationship at `index`.
    package func column(ofRelationship index: Int) -> String {
        relationshipColumns[index] ?? relationships[index].name
    }

    /// Whether `other` is this entity or inherits from it.
    package func isKind(of other: String) -> Bool { name == other || ancestors.contains(other) }
}
