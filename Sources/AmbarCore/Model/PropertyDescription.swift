/// One property in an entity definition: the concise way to write a model in Swift.
///
/// ```swift
/// EntityDescription("Employee", properties: [
///     .attribute("name", .string),
///     .attribute("salary", .double, defaultValue: 0),
///     .toOne("department", "Department", inverse: "employees"),
/// ])
/// ```
public enum PropertyDescription: Sendable, Hashable {
    /// An attribute.
    case attributeDescription(AttributeDescription)
    /// A relationship.
    case relationshipDescription(RelationshipDescription)

    /// An attribute named `name` of `type`, with the rules its values must keep at save
    /// (``AttributeValidation``; none by default), and whether the ledger keeps its value when an
    /// object is deleted (``AttributeDescription/preservesValueOnDeletion``).
    public static func attribute(
        _ name: String, _ type: AttributeType, optional: Bool = false,
        defaultValue: (any AttributeValueConvertible)? = nil, indexed: Bool = false,
        renamedFrom renamingIdentifier: String? = nil, validation: AttributeValidation = AttributeValidation(),
        preservesValueOnDeletion: Bool = false
    ) -> PropertyDescription {
        .attributeDescription(
            AttributeDescription(
                name: name, type: type, isOptional: optional,
                defaultValue: defaultValue?.attributeValue ?? .null, isIndexed: indexed,
                renamingIdentifier: renamingIdentifier, validation: validation, preservesValueOnDeletion: preservesValueOnDeletion))
    }

    /// A to-one relationship named `name` to `destination`.
    public static func toOne(
        _ name: String, _ destination: String, inverse: String? = nil,
        deleteRule: DeleteRule = .nullify, optional: Bool = true, renamedFrom renamingIdentifier: String? = nil
    ) -> PropertyDescription {
        .relationshipDescription(
            RelationshipDescription(
                name: name, destination: destination, inverse: inverse, isToMany: false,
                deleteRule: deleteRule, isOptional: optional, renamingIdentifier: renamingIdentifier))
    }

    /// A to-many relationship named `name` to `destination`.
    public static func toMany(
        _ name: String, _ destination: String, inverse: String? = nil,
        deleteRule: DeleteRule = .nullify, renamedFrom renamingIdentifier: String? = nil
    ) -> PropertyDescription {
        .relationshipDescription(
            RelationshipDescription(
                name: name, destination: destination, inverse: inverse, isToMany: true,
                deleteRule: deleteRule, isOptional: true, renamingIdentifier: renamingIdentifier))
    }
}
