import Foundation

/// A managed-object class that declares its entity itself: each stored property once, with its
/// Swift type. The `@Model` macro of `AmbarModels` writes the conformance:
///
/// ```swift
/// import AmbarModels
///
/// @Model final class Project: ManagedObject {
///     @Attribute(.unique) var name: String
///     @Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: Set<Task>
/// }
///
/// @Model final class Task: ManagedObject {
///     var title: String
///     var done: Bool = false
///     var priority: Int = 0
///     var project: Project?
/// }
///
/// let model = try ManagedObjectModel(declaring: [Project.self, Task.self])
/// ```
///
/// The entity is named like the class (``ManagedObject/entityName-type.property``); its attributes, their
/// types, optionality and defaults, its relationships with their inverses and delete rules,
/// uniqueness, indexes, transient and renamed properties all come from the declarations.
/// Declared classes and entities described in other ways (the Swift builder, JSON, an Xcode
/// model) can make one model together (``ManagedObjectModel/init(declaring:entities:fetchRequestTemplates:)``).
public protocol DeclaredModel: ManagedObject {
    /// The properties the class declares, in declaration order.
    static var declaredProperties: [DeclaredProperty<Self>] { get }
    /// The entity's name in an earlier model version, when it was renamed (lightweight migration
    /// then keeps its rows); `nil` by default.
    static var declaredOriginalName: String? { get }
}

extension DeclaredModel {
    /// Not renamed.
    public static var declaredOriginalName: String? { nil }

    /// The entity the class declares.
    public static var declaredEntity: EntityDescription {
        let properties = declaredProperties
        return EntityDescription(
            entityName, properties: properties.map(\.described),
            uniquenessConstraints: properties.filter(\.isUnique).map { [$0.name] },
            renamingIdentifier: declaredOriginalName)
    }

    /// The name of the property at `keyPath`, when the class declares one there.
    public static func declaredName(for keyPath: AnyKeyPath) -> String? {
        DeclaredKeyPaths.shared.names(for: self)[keyPath]
    }

    /// The classes this one's relationships lead to.
    static var declaredDestinations: [ManagedObject.Type] { declaredProperties.compactMap(\.destinationClass) }
}

/// The property names of each declared class by key path, built once per class.
final class DeclaredKeyPaths: @unchecked Sendable {
    static let shared = DeclaredKeyPaths()
    // Key paths are immutable objects; the lock guards the dictionary.
    private let lock = NSLock()
    private var byClass: [ObjectIdentifier: [AnyKeyPath: String]] = [:]

    func names<T: DeclaredModel>(for type: T.Type) -> [AnyKeyPath: String] {
        lock.lock()
        if let known = byClass[ObjectIdentifier(type)] {
            lock.unlock()
            return known
        }
        lock.unlock()
        var names: [AnyKeyPath: String] = [:]
        for property in type.declaredProperties { names[property.keyPath] = property.name }
        lock.lock()
        byClass[ObjectIdentifier(type)] = names
        lock.unlock()
        return names
    }
}

extension ManagedObjectModel {
    /// A model of the entities that `classes` declare, with `entities` described in other ways
    /// (the Swift builder, JSON, an Xcode model) beside them.
    ///
    /// A relationship whose inverse is declared on one side only gets it on both. Classes that
    /// declared relationships lead to are included too, so listing the classes at the roots is
    /// enough.
    ///
    /// - Throws: the errors of ``init(entities:classes:fetchRequestTemplates:)``: a relationship
    ///   to an entity that is not in the model, an inverse that does not match, a duplicate
    ///   entity name.
    public init(
        declaring classes: [any DeclaredModel.Type], entities: [EntityDescription] = [],
        fetchRequestTemplates: [FetchRequestTemplate] = []
    ) throws(AmbarError) {
        var ordered: [any DeclaredModel.Type] = []
        var seen = Set<ObjectIdentifier>()
        var pending: [ManagedObject.Type] = classes
        while let next = pending.first {
            pending.removeFirst()
            guard let declared = next as? any DeclaredModel.Type, seen.insert(ObjectIdentifier(next)).inserted else { continue }
            ordered.append(declared)
            pending += declared.declaredDestinations
        }
        var described = ordered.map { $0.declaredEntity }
        Self.completeInverses(&described)
        try self.init(
            entities: described + entities, classes: ordered.map { $0 as ManagedObject.Type },
            fetchRequestTemplates: fetchRequestTemplates)
    }

    /// Gives each relationship whose inverse names it the inverse back, when it has none.
    private static func completeInverses(_ entities: inout [EntityDescription]) {
        let index = Dictionary(entities.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        for e in entities.indices {
            for relationship in entities[e].relationships {
                guard let inverse = relationship.inverse, let d = index[relationship.destination],
                    let r = entities[d].relationships.firstIndex(where: { $0.name == inverse }),
                    entities[d].relationships[r].inverse == nil
                else { continue }
                entities[d].relationships[r].inverse = relationship.name
            }
        }
    }
}
