import Foundation

/// Options of a declared attribute: `@Attribute(.unique)`, `@Attribute(.transient, .indexed)`.
public struct DeclaredAttributeOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    /// Creates options from their raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// No two objects of the entity may have the same value (a uniqueness constraint).
    public static let unique = DeclaredAttributeOptions(rawValue: 1)
    /// Kept in memory and tracked like any attribute, but never stored.
    public static let transient = DeclaredAttributeOptions(rawValue: 2)
    /// The store keeps an index on the attribute.
    public static let indexed = DeclaredAttributeOptions(rawValue: 4)
}

/// One property of a declared model class, with the key path that names it: what the `@Model`
/// macro of `AmbarModels` lists in ``DeclaredModel/declaredProperties`` for each stored property.
///
/// The kind of property follows from the property's Swift type, checked by the compiler: a
/// ``DeclarableAttributeValue`` is an attribute of that type; any other `Codable` value a
/// transformable attribute (JSON); an optional ``ManagedObject`` subclass a to-one
/// relationship; a `Set` or an array of one a to-many relationship.
public struct DeclaredProperty<Root: ManagedObject> {
    /// The property as the entity describes it.
    public let described: PropertyDescription
    /// The property's key path (what key-path queries name).
    public let keyPath: PartialKeyPath<Root>
    /// Whether no two objects may share the property's value.
    public let isUnique: Bool
    /// For a relationship declared with its inverse's key path: the inverse's destination class,
    /// so that a model built from one side's classes can find the other.
    let destinationClass: ManagedObject.Type?

    init(_ description: PropertyDescription, _ keyPath: PartialKeyPath<Root>, isUnique: Bool = false, destination: ManagedObject.Type? = nil) {
        self.described = description
        self.keyPath = keyPath
        self.isUnique = isUnique
        self.destinationClass = destination
    }

    /// The property's name in the entity.
    public var name: String {
        switch described {
        case .attributeDescription(let a): return a.name
        case .relationshipDescription(let r): return r.name
        }
    }

    private static func attribute(
        _ keyPath: PartialKeyPath<Root>, _ name: String, type: AttributeType, isOptional: Bool, defaultValue: AttributeValue,
        options: DeclaredAttributeOptions, originalName: String?, customClassName: String? = nil
    ) -> DeclaredProperty {
        DeclaredProperty(
            .attributeDescription(
                AttributeDescription(
                    name: name, type: type, isOptional: isOptional, defaultValue: defaultValue, isIndexed: options.contains(.indexed),
                    renamingIdentifier: originalName, isTransient: options.contains(.transient), customClassName: customClassName)),
            keyPath, isUnique: options.contains(.unique))
    }

    /// An attribute stored as its own type.
    public static func property<V: DeclarableAttributeValue>(
        _ keyPath: KeyPath<Root, V>, _ name: String, default value: V? = nil,
        options: DeclaredAttributeOptions = [], originalName: String? = nil
    ) -> DeclaredProperty {
        attribute(
            keyPath, name, type: V.attributeType, isOptional: V.isOptionalValue, defaultValue: value?.attributeValue ?? .null,
            options: options, originalName: originalName)
    }

    /// A `Codable` value stored as a transformable attribute, encoded as JSON. The default value,
    /// if any, is what the property reads while the attribute is `nil`.
    public static func property<V: Codable & Sendable>(
        _ keyPath: KeyPath<Root, V>, _ name: String, default value: V? = nil,
        options: DeclaredAttributeOptions = [], originalName: String? = nil
    ) -> DeclaredProperty {
        attribute(
            keyPath, name, type: .transformable, isOptional: true, defaultValue: .null,
            options: options, originalName: originalName, customClassName: String(describing: V.self))
    }

    /// A to-one relationship.
    public static func property<D: ManagedObject>(
        _ keyPath: KeyPath<Root, D?>, _ name: String, default value: D?? = nil, deleteRule: DeleteRule = .nullify,
        inverse: PartialKeyPath<D>? = nil, inverseName: String? = nil, originalName: String? = nil
    ) -> DeclaredProperty {
        DeclaredProperty(
            .relationshipDescription(
                RelationshipDescription(
                    name: name, destination: D.entityName, inverse: inverseName, isToMany: false, deleteRule: deleteRule,
                    isOptional: true, renamingIdentifier: originalName)), keyPath, destination: D.self)
    }

    /// A to-many relationship, read as a set.
    public static func property<D: ManagedObject>(
        _ keyPath: KeyPath<Root, Set<D>>, _ name: String, default value: Set<D>? = nil, deleteRule: DeleteRule = .nullify,
        inverse: PartialKeyPath<D>? = nil, inverseName: String? = nil, originalName: String? = nil
    ) -> DeclaredProperty {
        DeclaredProperty(
            .relationshipDescription(
                RelationshipDescription(
                    name: name, destination: D.entityName, inverse: inverseName, isToMany: true, deleteRule: deleteRule,
                    renamingIdentifier: originalName)), keyPath, destination: D.self)
    }

    /// A to-many relationship, read as an array: in the relationship's order when it is ordered,
    /// else by primary key (objects not yet saved last, in insertion order).
    public static func property<D: ManagedObject>(
        _ keyPath: KeyPath<Root, [D]>, _ name: String, default value: [D]? = nil, deleteRule: DeleteRule = .nullify,
        inverse: PartialKeyPath<D>? = nil, inverseName: String? = nil, originalName: String? = nil, ordered: Bool = false
    ) -> DeclaredProperty {
        DeclaredProperty(
            .relationshipDescription(
                RelationshipDescription(
                    name: name, destination: D.entityName, inverse: inverseName, isToMany: true, deleteRule: deleteRule,
                    renamingIdentifier: originalName, isOrdered: ordered)), keyPath, destination: D.self)
    }
}
