import AmbarStack
import Foundation

/// The store of an app's models and the contexts that work on it: SwiftData's
/// `ModelContainer`, over an Ambar store.
///
/// ```swift
/// let container = try ModelContainer(for: Trip.self, Stop.self)       // the default store
/// let memory = try ModelContainer(
///     for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
///
/// @MainActor func addTrip() throws {
///     let context = container.mainContext
///     context.insert(Trip(name: "Lisbon", start: .now))
///     try context.save()
/// }
/// ```
///
/// The store is created, or opened and migrated lightweight to the schema (properties and
/// entities added, removed or renamed with `originalName`).
public final class ModelContainer: Sendable {
    /// The models the container stores.
    public let schema: Schema
    /// The configurations it was made with (the first names the store).
    public let configurations: [ModelConfiguration]
    let coordinator: PersistentStoreCoordinator
    /// Why contexts may not save, when the configuration says so.
    let saveRefusal: String?
    @MainActor private var storedMainContext: ModelContext?

    /// A container for `schema`, with the store the first configuration describes (the default
    /// store when none is given).
    ///
    /// - Throws: ``SwiftDataError`` (``SwiftDataError/Code/loadIssueModelContainer``, with the
    ///   store's error as its cause) when the store cannot be opened or migrated;
    ///   ``SwiftDataError/Code/invalidSchema`` when the models do not make a schema.
    public init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil, configurations: [ModelConfiguration]) throws {
        if let migrationPlan { try Self.checkSupported(migrationPlan) }
        let configuration = configurations.first ?? ModelConfiguration()
        let schema = configuration.schema.map { Schema(types: givenSchema.types + $0.types, version: givenSchema.version) } ?? givenSchema
        guard !schema.types.isEmpty else {
            throw SwiftDataError(.invalidSchema, "a container needs at least one model class: name them in ModelContainer(for:) or the Schema")
        }
        self.schema = schema
        self.configurations = configurations.isEmpty ? [configuration] : configurations
        let model = try schema.managedObjectModel()
        if !configuration.isStoredInMemoryOnly {
            do {
                try FileManager.default.createDirectory(at: configuration.url.deletingLastPathComponent(), withIntermediateDirectories: true)
            } catch {
                throw SwiftDataError(
                    .loadIssueModelContainer, "the directory of \(configuration.url.path) cannot be created", cause: error)
            }
        }
        do {
            coordinator = try PersistentStoreCoordinator(model: model, store: configuration.storeDescription, name: configuration.name)
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, "the store of configuration '\(configuration.name)' cannot be opened", cause: error)
        }
        saveRefusal = configuration.allowsSave ? nil : "configuration '\(configuration.name)' does not allow saving (allowsSave: false)"
    }

    /// Throws for a stage this version cannot run, rather than skipping its code.
    private static func checkSupported(_ plan: any SchemaMigrationPlan.Type) throws {
        for stage in plan.stages {
            guard case .custom(let from, let to, let willMigrate, let didMigrate) = stage, willMigrate != nil || didMigrate != nil else { continue }
            throw SwiftDataError(
                .migrationFailed,
                "\(plan)'s custom stage from \(from.versionIdentifier) to \(to.versionIdentifier) has code to run (willMigrate/didMigrate), which AmbarSwiftData does not run yet; lightweight stages (and custom ones without code) are supported"
            )
        }
    }

    /// A container for `schema`, with the store the first configuration describes.
    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil, configurations: ModelConfiguration...) throws {
        try self.init(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for the model classes `forTypes` (and those their relationships lead to).
    public convenience init(
        for forTypes: any PersistentModel.Type..., migrationPlan: (any SchemaMigrationPlan.Type)? = nil, configurations: ModelConfiguration...
    )
        throws
    {
        try self.init(for: Schema(forTypes), migrationPlan: migrationPlan, configurations: configurations)
    }

    /// The context of the main actor, made on first use. It saves by itself (``ModelContext/autosaveEnabled``)
    /// and merges the saves of the container's other contexts.
    @MainActor public var mainContext: ModelContext {
        if let storedMainContext { return storedMainContext }
        let context = ModelContext(container: self, main: true)
        storedMainContext = context
        return context
    }

    /// Deletes every model of the store (SwiftData's `deleteAllData()`): the store is emptied,
    /// not removed.
    ///
    /// - Throws: ``SwiftDataError`` with the store's error when a delete cannot be saved.
    public func deleteAllData() throws {
        let context = ModelContext(self)
        for type in schema.types { try context.deleteAll(type) }
        try context.save()
    }
}
