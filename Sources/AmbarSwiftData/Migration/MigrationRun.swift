import AmbarStack
import Foundation

/// Takes a store through a ``SchemaMigrationPlan``: from the version that made it, one version
/// at a time, running each custom stage's code around the lightweight migration between them.
struct MigrationRun {
    let plan: any SchemaMigrationPlan.Type
    let configuration: ModelConfiguration

    func run() throws {
        let versions = plan.schemas
        guard versions.count > 1, let stored = try storedModelHash() else { return }
        let hashes = try versions.map { try Schema(versionedSchema: $0).managedObjectModel().versionHash }
        // A store no version describes is migrated lightweight straight to the container's schema.
        guard let start = hashes.firstIndex(of: stored) else { return }
        for index in start..<(versions.count - 1) {
            let from = versions[index]
            let to = versions[index + 1]
            let stage = plan.stages.first { $0.fromVersion == ObjectIdentifier(from) && $0.toVersion == ObjectIdentifier(to) }
            if let willMigrate = stage?.willMigrate {
                try run(willMigrate, named: "willMigrate", from: from, to: to, on: from)
            }
            // Opening the store with the next version's models migrates it lightweight.
            _ = try ModelContainer(schema: Schema(versionedSchema: to), configurations: [configuration], shares: false)
            if let didMigrate = stage?.didMigrate {
                try run(didMigrate, named: "didMigrate", from: from, to: to, on: to)
            }
        }
    }

    /// The version hash of the model the store was made with; `nil` when there is no store yet.
    private func storedModelHash() throws -> String? {
        let description = configuration.storeDescription
        switch description {
        case .inMemory:
            return nil
        case .sqlite(let url):
            guard FileManager.default.fileExists(atPath: url.path) else { return nil }
            let size: Int
            do {
                size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
            } catch {
                throw SwiftDataError(.loadIssueModelContainer, "the store file \(url.path) cannot be examined", cause: error)
            }
            guard size > 0 else { return nil }  // an empty file: a store not made yet
        case .server:
            break
        }
        do {
            return try PersistentStoreCoordinator.storedModel(in: description).versionHash
        } catch .storeCannotOpen(_, _, _) where description.isServer {
            return nil  // no store in the database yet
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, "the model of the store of configuration '\(configuration.name)' cannot be read", cause: error)
        }
    }

    /// Runs a stage's code on a context of `version`'s models, and saves what it left unsaved.
    private func run(
        _ code: (ModelContext) throws -> Void, named name: String, from: any VersionedSchema.Type, to: any VersionedSchema.Type,
        on version: any VersionedSchema.Type
    ) throws {
        let container = try ModelContainer(schema: Schema(versionedSchema: version), configurations: [configuration], shares: false)
        let context = ModelContext(container)
        do {
            try code(context)
            if context.hasChanges { try context.save() }
        } catch {
            let reached = name == "willMigrate" ? from.versionIdentifier : to.versionIdentifier
            throw SwiftDataError(
                .migrationFailed,
                "\(name) of \(plan)'s stage from \(from.versionIdentifier) to \(to.versionIdentifier) failed; the store stays at version \(reached), with what the code saved",
                cause: error)
        }
    }
}

extension MigrationStage {
    /// The version the stage starts from.
    var fromVersion: ObjectIdentifier {
        switch self {
        case .lightweight(let from, _), .custom(let from, _, _, _): return ObjectIdentifier(from)
        }
    }

    /// The version the stage ends at.
    var toVersion: ObjectIdentifier {
        switch self {
        case .lightweight(_, let to), .custom(_, let to, _, _): return ObjectIdentifier(to)
        }
    }

    /// The code run before the stage's migration.
    var willMigrate: ((ModelContext) throws -> Void)? {
        if case .custom(_, _, let code, _) = self { return code }
        return nil
    }

    /// The code run after it.
    var didMigrate: ((ModelContext) throws -> Void)? {
        if case .custom(_, _, _, let code) = self { return code }
        return nil
    }
}

extension StoreDescription {
    /// Whether the store is on a database server.
    fileprivate var isServer: Bool {
        if case .server = self { return true }
        return false
    }
}
