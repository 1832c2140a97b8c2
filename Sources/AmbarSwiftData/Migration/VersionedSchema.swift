/// One version of an app's models, as SwiftData declares them: the model classes are usually
/// nested in the type, and a `typealias` names the current ones.
///
/// ```swift
/// enum TripsSchemaV2: VersionedSchema {
///     static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
///     static var models: [any PersistentModel.Type] { [Trip.self] }
///     @Model final class Trip { var name: String; var start: Date; init(name: String, start: Date) { … } }
/// }
/// typealias Trip = TripsSchemaV2.Trip
/// ```
public protocol VersionedSchema {
    /// The version.
    static var versionIdentifier: Schema.Version { get }
    /// The model classes of this version.
    static var models: [any PersistentModel.Type] { get }
}

/// How a store moves from one ``VersionedSchema`` to the next: SwiftData's migration plan.
public protocol SchemaMigrationPlan {
    /// Every version, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stages between consecutive versions.
    static var stages: [MigrationStage] { get }
}

/// One step of a ``SchemaMigrationPlan``.
public enum MigrationStage {
    /// A step the store makes by itself: added, removed and renamed (`originalName`) properties
    /// and entities, optionality, defaults.
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// A lightweight step with code before it (`willMigrate`, on a context of the old models)
    /// and after it (`didMigrate`, on a context of the new ones).
    case custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
        willMigrate: ((ModelContext) throws -> Void)?, didMigrate: ((ModelContext) throws -> Void)?)
}
