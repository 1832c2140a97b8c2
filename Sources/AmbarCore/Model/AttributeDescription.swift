/// Describes one attribute of an entity: its name, type, optionality and default.
public struct AttributeDescription: Sendable, Hashable {
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
    /// Whether the attribute lives in memory only (Core Data's *transient*): it is tracked as a
    /// change (``ManagedObject/hasChanges``, ``ManagedObject/changedValues()``) but never written
    /// to the store or the ledger, cannot be used in a fetch predicate or sort, and returns to its
    /// default when the object is turned into a fault or fetched anew.
    public var isTransient: Bool
    /// For a ``AttributeType/transformable`` attribute: the name of the ``AttributeTransformer``
    /// that turns its bytes into a Swift value (Core Data's `valueTransformerName`).
    public var valueTransformerName: String?
    /// For a ``AttributeType/transformable`` attribute: the class Core Data would decode it to
    /// (`customClassName`), kept for reference.
    public var customClassName: String?
    /// For a derived attribute: the expression Core Data computes it from (`derivationExpression`),
    /// evaluated at every save.
    public var derivation: String?
    /// The rules a value must keep when the object is saved (bounds, lengths, a pattern); none by
    /// default.
    public var validation: AttributeValidation
    /// Whether the ledger keeps the attribute's value when an object is deleted, in the deleting
    /// transaction's ``HistoryTransaction/tombstones`` (Core Data's
    /// `preservesValueInHistoryOnDeletion`, SwiftData's `.preserveValueOnDeletion`). Like
    /// validation rules, it does not change what the store's tables hold, nor the model's
    /// ``ManagedObjectModel/versionHash``.
    public var preservesValueOnDeletion: Bool

    /// Creates an attribute description.
    public init(
        name: String, type: AttributeType, isOptional: Bool = false,
        defaultValue: AttributeValue = .null, isIndexed: Bool = false, renamingIdentifier: String? = nil,
        isTransient: Bool = false, valueTransformerName: String? = nil, customClassName: String? = nil,
        derivation: String? = nil, validation: AttributeValidation = AttributeValidation(), preservesValueOnDeletion: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isIndexed = isIndexed
        self.renamingIdentifier = renamingIdentifier
        self.isTransient = isTransient
        self.valueTransformerName = valueTransformerName
        self.customClassName = customClassName
        self.derivation = derivation
        self.validation = validation.coerced(to: type)
        self.preservesValueOnDeletion = preservesValueOnDeletion
    }
}

extension AttributeDescription: Codable {
    enum CodingKeys: String, CodingKey {
        case name, type, isOptional, defaultValue, isIndexed, renamingIdentifier
        case isTransient, valueTransformerName, customClassName, derivation, validation, preservesValueOnDeletion
    }

    /// Decodes the description, taking the fields added after the first release as absent
    /// (their defaults) when a stored model does not have them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try c.decode(String.self, forKey: .name), type: try c.decode(AttributeType.self, forKey: .type),
            isOptional: try c.decode(Bool.self, forKey: .isOptional), defaultValue: try c.decode(AttributeValue.self, forKey: .defaultValue),
            isIndexed: try c.decode(Bool.self, forKey: .isIndexed), renamingIdentifier: try c.decodeIfPresent(String.self, forKey: .renamingIdentifier),
            isTransient: try c.decodeIfPresent(Bool.self, forKey: .isTransient) ?? false,
            valueTransformerName: try c.decodeIfPresent(String.self, forKey: .valueTransformerName),
            customClassName: try c.decodeIfPresent(String.self, forKey: .customClassName),
            derivation: try c.decodeIfPresent(String.self, forKey: .derivation),
            validation: try c.decodeIfPresent(AttributeValidation.self, forKey: .validation) ?? AttributeValidation(),
            preservesValueOnDeletion: try c.decodeIfPresent(Bool.self, forKey: .preservesValueOnDeletion) ?? false)
    }

    /// Encodes the fields added after the first release only when set, so that the
    /// ``ManagedObjectModel/versionHash`` of a model that does not use them is unchanged.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(type, forKey: .type)
        try c.encode(isOptional, forKey: .isOptional)
        try c.encode(defaultValue, forKey: .defaultValue)
        try c.encode(isIndexed, forKey: .isIndexed)
        try c.encodeIfPresent(renamingIdentifier, forKey: .renamingIdentifier)
        if isTransient { try c.encode(true, forKey: .isTransient) }
        try c.encodeIfPresent(valueTransformerName, forKey: .valueTransformerName)
        try c.encodeIfPresent(customClassName, forKey: .customClassName)
        try c.encodeIfPresent(derivation, forKey: .derivation)
        if !validation.isEmpty { try c.encode(validation, forKey: .validation) }
        if preservesValueOnDeletion { try c.encode(true, forKey: .preservesValueOnDeletion) }
    }
}
