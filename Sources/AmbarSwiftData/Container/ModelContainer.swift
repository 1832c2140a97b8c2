import AmbarStack
import Foundation
import SharedStoreIPC

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
///
/// A configuration that names a shared directory (``ModelConfiguration/init(_:schema:sharedDirectory:allowsSave:)``)
/// makes the container join the processes of that directory: their saves are merged into
/// ``mainContext``, and ``sharing`` is the running `SharedStoreSync` (for durable consumers,
/// ``ModelChangeConsumer``, and merge events). Call ``stopSharing()`` before the process exits.
public final class ModelContainer: Sendable {
    /// The models the container stores.
    public let schema: Schema
    /// The configurations it was made with (the first names the store).
    public let configurations: [ModelConfiguration]
    /// The Ambar stack under the container: its main context is ``mainContext``'s.
    let stack: DataStack
    let coordinator: PersistentStoreCoordinator
    /// The stack's main-queue context, which ``mainContext`` stands on.
    let stackMainContext: ManagedObjectContext
    /// The sharing with the other processes of the configuration's shared directory, when it
    /// names one: observe its merges (`observeRemoteMerges`), run durable consumers on it.
    public let sharing: SharedStoreSync?
    /// Why contexts may not save, when the configuration says so.
    let saveRefusal: String?
    @MainActor private var storedMainContext: ModelContext?

    /// A container for `schema`, with the store the first configuration describes (the default
    /// store when none is given).
    ///
    /// With a `migrationPlan`, a store made by one of the plan's earlier versions is taken
    /// through each later version in turn: each stage's `willMigrate` runs on a context of the
    /// old models, the store is migrated lightweight to the next version, then `didMigrate` runs
    /// on a context of the new models (see ``MigrationStage``). A store the plan's versions do
    /// not describe is migrated lightweight straight to `schema`.
    ///
    /// - Throws: ``SwiftDataError`` (``SwiftDataError/Code/loadIssueModelContainer``, with the
    ///   store's error as its cause) when the store cannot be opened, migrated or shared;
    ///   ``SwiftDataError/Code/migrationFailed`` when a stage's code throws (the store stays at
    ///   the version before that stage's migration, with what the code saved);
    ///   ``SwiftDataError/Code/invalidSchema`` when the models do not make a schema.
    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil, configurations: [ModelConfiguration]) throws {
        let configuration = configurations.first ?? ModelConfiguration()
        if let migrationPlan { try MigrationRun(plan: migrationPlan, configuration: configuration).run() }
        try self.init(schema: givenSchema, configurations: configurations.isEmpty ? [configuration] : configurations, shares: true)
    }

    /// A container for `givenSchema` on the first configuration's store, migrated lightweight to
    /// it; the store is shared when the configuration says so and `shares` is true.
    init(schema givenSchema: Schema, configurations: [ModelConfiguration], shares: Bool) throws {
        let configuration = configurations[0]
        let schema = configuration.schema.map { Schema(types: givenSchema.types + $0.types, version: givenSchema.version) } ?? givenSchema
        guard !schema.types.isEmpty else {
            throw SwiftDataError(.invalidSchema, "a container needs at least one model class: name them in ModelContainer(for:) or the Schema")
        }
        self.schema = schema
        self.configurations = configurations
        let model = try schema.managedObjectModel()
        let storeType: DataStack.StoreType
        switch configuration.storeDescription {
        case .sqlite: storeType = .sqlite
        case .inMemory: storeType = .inMemory
        case .server(let server): storeType = .server(server)
        }
        do {
            stack = try DataStack.open(
                storeType: storeType, model: .model(model), storeURL: storeType == .sqlite ? configuration.url : nil, name: configuration.name,
                usingSeparateCoordinators: false)
            coordinator = try stack.writerCoordinator
            stackMainContext = try stack.mainContext
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, "the store of configuration '\(configuration.name)' cannot be opened", cause: error)
        }
        if shares, let sharingConfiguration = configuration.sharing {
            do {
                sharing = try SharedStoreSync.start(readyStack: stack, configuration: sharingConfiguration)
            } catch {
                throw SwiftDataError(
                    .loadIssueModelContainer,
                    "the store of configuration '\(configuration.name)' cannot be shared through \(sharingConfiguration.directory.path)",
                    cause: error)
            }
        } else {
            sharing = nil
        }
        saveRefusal = configuration.allowsSave ? nil : "configuration '\(configuration.name)' does not allow saving (allowsSave: false)"
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

    /// Stops sharing the store with the other processes (see `SharedStoreSync/stop()`): this
    /// process's saves are no longer announced, and theirs no longer merged. Does nothing for a
    /// container that does not share its store, or a second time.
    ///
    /// Call it before the process exits; one that exits without it loses nothing (the store's
    /// ledger is the truth), but the other processes notice later.
    public func stopSharing() async {
        await sharing?.stop()
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
