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

    /// Creates an attribute description.
    public init(
        name: String, type: AttributeType, isOptional: Bool = false,
        defaultValue: AttributeValue = .null, isIndexed: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isIndexed = isIndexed
    }
}
