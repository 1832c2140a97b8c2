@_exported import AmbarStack

/// Makes a ``ManagedObject`` subclass declare its entity: each stored `var` becomes a property of
/// the entity, with the attribute type, optionality and default its Swift declaration gives, and
/// reads and writes the object's values. The class conforms to ``DeclaredModel``.
///
/// ```swift
/// @Model final class Task: ManagedObject {
///     var title: String
///     var done: Bool = false
///     var due: Date?
///     var priority: Int = 0
///     var tags: [String] = []                   // Codable: a transformable attribute (JSON)
///     var project: Project?                     // a to-one relationship
/// }
///
/// @Model final class Project: ManagedObject {
///     @Attribute(.unique) var name: String
///     @Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: Set<Task>
/// }
///
/// let model = try ManagedObjectModel(declaring: [Project.self, Task.self])
/// ```
///
/// Each property needs its type written out (`var done: Bool = false`, not `var done = false`):
/// its storage is the object's, so Swift sees a computed property. A `Codable` property that is
/// not one of the attribute types needs a default value or an optional type. `let`, `static`,
/// `lazy` and computed properties, and those marked ``Transient()``, are not part of the entity.
///
/// The entity is named like the class, or as `name` says (`@Model(name: "Task") final class
/// TaskItem`, so that the class does not hide Swift's `Task`); nesting the class does the same
/// (`enum Tracker { @Model final class Task: ManagedObject { … } }` declares the entity `Task`).
///
/// - Parameters:
///   - name: the entity's name, when it is not the class's.
///   - originalName: the entity's name in an earlier model version, when it was renamed.
@attached(member, names: named(declaredProperties), named(declaredOriginalName), named(entityName), named(init))
@attached(memberAttribute)
@attached(extension, conformances: DeclaredModel)
public macro Model(name: String? = nil, originalName: String? = nil) = #externalMacro(module: "AmbarMacros", type: "ModelMacro")

/// Options of a declared attribute: `@Attribute(.unique) var name: String`,
/// `@Attribute(.transient) var draft: String?`, `@Attribute(originalName: "title") var name: String`.
///
/// - Parameters:
///   - options: ``DeclaredAttributeOptions/unique``, ``DeclaredAttributeOptions/transient``,
///     ``DeclaredAttributeOptions/indexed``.
///   - originalName: the attribute's name in an earlier model version, when it was renamed.
@attached(peer)
public macro Attribute(_ options: DeclaredAttributeOptions..., originalName: String? = nil) =
    #externalMacro(module: "AmbarMacros", type: "PropertyOptionsMacro")

/// Options of a declared relationship:
/// `@Relationship(deleteRule: .cascade, inverse: \Task.project) var tasks: Set<Task>`.
///
/// - Parameters:
///   - deleteRule: what deleting the object does to its destinations (``DeleteRule/nullify``
///     by default).
///   - inverse: the destination's property that points back; it is enough on one side.
///   - originalName: the relationship's name in an earlier model version, when it was renamed.
///   - ordered: for an array, whether the relationship keeps the array's order.
@attached(peer)
public macro Relationship(deleteRule: DeleteRule = .nullify, inverse: AnyKeyPath? = nil, originalName: String? = nil, ordered: Bool = false) =
    #externalMacro(module: "AmbarMacros", type: "PropertyOptionsMacro")

/// Leaves a stored property out of the entity: an ordinary Swift property of the object, never
/// stored, not tracked, not merged. (A transient *attribute*, tracked but not stored, is
/// `@Attribute(.transient)`.)
@attached(peer)
public macro Transient() = #externalMacro(module: "AmbarMacros", type: "PropertyOptionsMacro")

/// Turns a declared stored property into accessors of the object's values (written by
/// ``Model(originalName:)`` on each property; not for direct use).
@attached(accessor, names: named(init), named(get), named(set))
public macro _DeclaredProperty() = #externalMacro(module: "AmbarMacros", type: "DeclaredPropertyMacro")
