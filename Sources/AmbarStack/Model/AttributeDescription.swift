/// Describes one attribute of an entity: its name, type, optionality and default.
public struct AttributeDescription: Codable, Sendable, Hashable {
    /// The attribute's name, also the name of its column.
    public var name: String
    /// The attribute's type.
    public var type: AttributeType
    /// Whether the attribute may be `nil` when the object is saved.
    public var isOptional: Bool
    /// The value a newly inserted object starts with (``AttributeValue/null`` when none).
    public var defaultValue: AttributeValue
    /// Whether the store keeps an index on this attribute.
    public var isIndexed: Bool
    /// The attribute's name in an earlier model version, when it was renamed: lightweight
    /// migration then renames the column and keeps its values (Core Data's renaming identifier).
    public var renamingIdentifier: String?

    /// Creates an attribute description.
    public init(
        name: String, type: AttributeType, isOptional: Bool = false,
        defaultValue: AttributeValue = .null, isIndexed: Bool = false, renamingIdentifier: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isIndexed = isIndexed
        self.renamingIdentifier = renamingIdentifier
    }
}
