import AmbarStack
import Foundation

/// The models a container stores, with a version: SwiftData's `Schema`.
///
/// ```swift
/// let schema = Schema([Trip.self, Stop.self])
/// let container = try ModelContainer(for: schema, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
/// ```
///
/// Models that relationships lead to are part of the schema too, so listing the roots is enough.
/// Each model class is an entity named like the class.
public final class Schema: Hashable, Sendable, CustomStringConvertible {
    /// The schema's version (a ``VersionedSchema``'s, or 1.0.0).
    public let version: Version
    /// The model classes, those relationships lead to included, in the order first met.
    let types: [any PersistentModel.Type]
    /// Each entity's model class and what contexts do with its properties, read once
    /// (`schemaMetadata` builds the properties anew at each call).
    let accessByEntity: [String: EntityAccess]
    /// Each model class's entity, worked out once (`String(describing:)` is slow).
    private let accessByType: [ObjectIdentifier: EntityAccess]

    /// A schema of `types` (and the models their relationships lead to).
    public convenience init(_ types: [any PersistentModel.Type], version: Version = Version(1, 0, 0)) {
        self.init(types: types, version: version)
    }

    init(types: [any PersistentModel.Type], version: Version) {
        self.version = version
        let types = Self.closure(of: types)
        self.types = types
        let access = types.map { EntityAccess($0, $0.schemaMetadata) }
        accessByEntity = Dictionary(access.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        accessByType = Dictionary(access.map { (ObjectIdentifier($0.type), $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// What a context does with the models of `type`, when the schema has it.
    func access(of type: any PersistentModel.Type) -> EntityAccess? { accessByType[ObjectIdentifier(type)] }

    /// A schema of `types` (and the models their relationships lead to).
    public convenience init(_ types: any PersistentModel.Type..., version: Version = Version(1, 0, 0)) {
        self.init(types: types, version: version)
    }

    /// The schema a versioned schema declares, with its version.
    public convenience init(versionedSchema: any VersionedSchema.Type) {
        self.init(types: versionedSchema.models, version: versionedSchema.versionIdentifier)
    }

    /// The names of the entities, in order.
    public var entityNames: [String] { types.map { $0.entityName } }

    /// Schemas are equal when they have the same version and entities.
    public static func == (lhs: Schema, rhs: Schema) -> Bool {
        lhs.version == rhs.version && lhs.entityNames == rhs.entityNames
    }

    /// Hashes the version and entity names.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(entityNames)
    }

    /// "Schema 1.0.0: Trip, Stop".
    public var description: String { "Schema \(version): \(entityNames.joined(separator: ", "))" }

    /// `types` and every model their relationships lead to.
    private static func closure(of types: [any PersistentModel.Type]) -> [any PersistentModel.Type] {
        var ordered: [any PersistentModel.Type] = []
        var seen = Set<ObjectIdentifier>()
        var pending = types
        while !pending.isEmpty {
            let next = pending.removeFirst()
            guard seen.insert(ObjectIdentifier(next)).inserted else { continue }
            ordered.append(next)
            pending += next.schemaMetadata.compactMap(\.destination)
        }
        return ordered
    }
}
