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
///
/// ```swift
/// enum TripsMigrationPlan: SchemaMigrationPlan {
///     static var schemas: [any VersionedSchema.Type] { [TripsV1.self, TripsV2.self, TripsV3.self] }
///     static var stages: [MigrationStage] { [removeDuplicates, .lightweight(fromVersion: TripsV2.self, toVersion: TripsV3.self)] }
///     static let removeDuplicates = MigrationStage.custom(
///         fromVersion: TripsV1.self, toVersion: TripsV2.self,
///         willMigrate: { context in /* delete duplicates before names become unique */ try context.save() },
///         didMigrate: nil)
/// }
/// let container = try ModelContainer(for: TripsV3.Trip.self, migrationPlan: TripsMigrationPlan.self)
/// ```
///
/// ``ModelContainer/init(for:migrationPlan:configurations:)-(_,_,[ModelConfiguration])`` finds the version that made the
/// store (by its models) and runs every stage after it, one version at a time.
public protocol SchemaMigrationPlan {
    /// Every version, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stages between consecutive versions.
    static var stages: [MigrationStage] { get }
}

/// One step of a ``SchemaMigrationPlan``.
public enum MigrationStage: @unchecked Sendable {  // its code runs only while a container opens, on the opening thread
    /// A step the store makes by itself: added, removed and renamed (`originalName`) properties
    /// and entities, optionality, defaults.
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// A lightweight step with code before it (`willMigrate`, on a context of the old models)
    /// and after it (`didMigrate`, on a context of the new ones). What the code changes and does
    /// not save is saved when it returns; code that throws stops the migration there.
    case custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
        willMigrate: ((ModelContext) throws -> Void)?, didMigrate: ((ModelContext) throws -> Void)?)
}
