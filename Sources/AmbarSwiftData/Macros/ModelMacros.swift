/// Makes a class a persistent model, as SwiftData's `@Model` does: each stored `var` is
/// persisted (its type written out or inferred from its default), the class is `Observable`
/// (reads and writes of persisted properties are seen by `withObservationTracking` and SwiftUI
/// alike) and ``PersistentModel``.
///
/// ```swift
/// @Model final class Trip {
///     @Attribute(.unique) var name: String
///     var start: Date
///     var status = Status.planned              // an enumeration, stored as its raw value
///     @Relationship(deleteRule: .cascade, inverse: \Stop.trip) var stops = [Stop]()
///     @Transient var isSelected = false        // not persisted
///
///     init(name: String, start: Date) {
///         self.name = name
///         self.start = start
///     }
/// }
/// ```
///
/// The entity is named like the class (also when the class is nested, as versioned schemas
/// nest them). A `let` without a default is persisted too: written when the model is inserted,
/// given back when it is fetched; a `let` with a default is an ordinary constant.
@attached(
    member,
    names: named(_$backingData), named(_$observationRegistrar), named(persistentBackingData), named(schemaMetadata),
    named(_$schemaConstraints), named(init), named(_$observedValueChanged)
)
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel, Observable, Sendable)
public macro Model() = #externalMacro(module: "AmbarMacros", type: "PersistentModelMacro")

/// Turns a persisted property into accessors of the model's backing data (written by
/// ``Model()`` on each persisted property; not for direct use).
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(`_$`))
public macro _PersistedProperty() = #externalMacro(module: "AmbarMacros", type: "PersistedPropertyMacro")

/// Options of a persisted attribute: `@Attribute(.unique) var name: String`,
/// `@Attribute(originalName: "title") var name: String`.
///
/// - Parameters:
///   - options: ``Schema/Attribute/Option``s (see each for what it does here).
///   - originalName: the attribute's name in an earlier schema version, when it was renamed.
///   - hashModifier: accepted and recorded; a schema's version is its ``VersionedSchema``'s.
@attached(peer)
public macro Attribute(_ options: Schema.Attribute.Option..., originalName: String? = nil, hashModifier: String? = nil) =
    #externalMacro(module: "AmbarMacros", type: "PropertyOptionsMacro")

/// Options of a relationship:
/// `@Relationship(deleteRule: .cascade, inverse: \Stop.trip) var stops: [Stop]`.
///
/// - Parameters:
///   - options: ``Schema/Relationship/Option``s.
///   - deleteRule: what deleting the model does to its destinations (`.nullify` by default).
///   - minimumModelCount: the fewest destinations a save accepts (0: no minimum).
///   - maximumModelCount: the most destinations a save accepts (0: no maximum).
///   - originalName: the relationship's name in an earlier schema version, when it was renamed.
///   - inverse: the destination's property that points back; without it, the one relationship
///     of the destination back to this class, when there is exactly one, is the inverse.
///   - hashModifier: accepted and recorded.
@attached(peer)
public macro Relationship(
    _ options: Schema.Relationship.Option..., deleteRule: Schema.Relationship.DeleteRule = .nullify,
    minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, originalName: String? = nil,
    inverse: AnyKeyPath? = nil, hashModifier: String? = nil
) = #externalMacro(module: "AmbarMacros", type: "PropertyOptionsMacro")

/// Leaves a stored property out of the model: an ordinary Swift property, never persisted. It
/// needs a default value (models made from stored rows start with it).
@attached(peer)
public macro Transient() = #externalMacro(module: "AmbarMacros", type: "PropertyOptionsMacro")

/// No two models of the class may share the values of each list of properties:
/// `#Unique<Person>([\.id], [\.givenName, \.familyName])`. Inserting a model that does
/// updates the one stored (an upsert), as in SwiftData.
@freestanding(declaration)
public macro Unique<T>(_ constraints: [PartialKeyPath<T>]...) = #externalMacro(module: "AmbarMacros", type: "SchemaConstraintMacro")

/// The store keeps an index on each list of properties: `#Index<Trip>([\.name], [\.start, \.end])`.
@freestanding(declaration)
public macro Index<T>(_ indices: [PartialKeyPath<T>]...) = #externalMacro(module: "AmbarMacros", type: "SchemaConstraintMacro")

/// Makes an actor a ``ModelActor``: it gets `modelContainer`, `modelExecutor` and
/// `init(modelContainer:)`; its ``ModelActor/modelContext`` is a context of its own, and the
/// actor runs on that context's queue.
///
/// ```swift
/// @ModelActor actor Importer {
///     func importTrips(_ names: [String]) throws {
///         for name in names { modelContext.insert(Trip(name: name, start: .now)) }
///         try modelContext.save()
///     }
/// }
/// let importer = Importer(modelContainer: container)
/// try await importer.importTrips(["Lisbon", "Porto"])
/// ```
@attached(member, names: named(modelExecutor), named(modelContainer), named(init))
@attached(extension, conformances: ModelActor)
public macro ModelActor() = #externalMacro(module: "AmbarMacros", type: "ModelActorMacro")
