import AmbarCore
import AmbarDataStack
import AmbarResults
import Foundation
import Logging

/// One store and coordinator shared by many single-context stacks (BBLCoreDataKit's
/// `BBLPersistence`). Nothing is opened until the first context is added. A root context's save
/// is merged into every other registered context, its updated objects loaded there first so
/// results controllers and monitors see every update (BBL's trade: memory for reliable updates;
/// DataStack refreshes only what is loaded). Insert-only and delete-only saves are merged too.
public final class SharedPersistence: Sendable {
    /// The model.
    public let model: ManagedObjectModel
    /// The store file, or `nil` in memory.
    public let storeURL: URL?
    private let shouldKillStore: Bool
    private let state = Locked(State())
    static let logger = Logger(label: "ambar.stack.shared-persistence")

    private struct State {
        var coordinator: PersistentStoreCoordinator?
        var observation: ContextObservation?
        var contexts: [ContextIdentifier: WeakRegistered] = [:]
    }

    /// A persistence for `model`; the store is `storeURL` (a directory or a file; the library
    /// default location when `nil`), `<name>.sqlite`, or in memory.
    ///
    /// - Parameters:
    ///   - model: the model of the store.
    ///   - storeType: SQLite (the default), in memory, or PostgreSQL.
    ///   - storeURL: a directory or a store file; the library default location when `nil`.
    ///   - name: the store's name: the file is `<name>.sqlite` in a directory.
    ///   - shouldKillStore: delete the store's files before opening it, so every run
    ///     starts empty (for development and tests).
    public init(model: ManagedObjectModel, storeType: DataStack.StoreType = .sqlite, storeURL: URL? = nil, name: String, shouldKillStore: Bool = false) {
        self.model = model
        self.storeURL = storeType == .inMemory ? nil : StoreLocation.storeFile(for: storeURL, name: name)
        self.shouldKillStore = shouldKillStore
    }

    /// The coordinator, opening the store on first use.
    public func coordinator() throws(AmbarError) -> PersistentStoreCoordinator {
        try state.withLock { s throws(AmbarError) -> PersistentStoreCoordinator in
            if let coordinator = s.coordinator { return coordinator }
            if shouldKillStore, let storeURL {
                // try?: cleanup; some of these files never existed
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: storeURL.path + suffix) }
            }
            let coordinator = try PersistentStoreCoordinator(model: model, store: storeURL.map { .sqlite($0) } ?? .inMemory, name: "shared")
            s.observation = coordinator.observeDidSave { [weak self] note in self?.distribute(note) }
            s.coordinator = coordinator
            return coordinator
        }
    }

    /// A new root context on the shared coordinator, registered for merges.
    public func addContext(concurrencyType: ManagedObjectContext.ConcurrencyType, mergePolicy: MergePolicy = .error, name: String? = nil) throws(AmbarError)
        -> ManagedObjectContext
    {
        let context = ManagedObjectContext(concurrencyType: concurrencyType, coordinator: try coordinator(), name: name)
        context.mergePolicy = mergePolicy
        state.withLock { $0.contexts[context.identifier] = WeakRegistered(context) }
        return context
    }

    /// A new child of `parent`, not registered for merges: its saves go into its parent only.
    public func addChildContext(
        for parent: ManagedObjectContext, concurrencyType: ManagedObjectContext.ConcurrencyType, mergePolicy: MergePolicy = .error, name: String? = nil
    ) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: concurrencyType, parent: parent, name: name)
        context.mergePolicy = mergePolicy
        return context
    }

    /// Stops merging into `context` (BBL's `removeContext`).
    public func removeContext(_ context: ManagedObjectContext) {
        _ = state.withLock { $0.contexts.removeValue(forKey: context.identifier) }
    }

    /// How many contexts receive merges.
    public var registeredContextCount: Int {
        state.withLock { s in
            s.contexts = s.contexts.filter { $0.value.context != nil }
            return s.contexts.count
        }
    }

    private func distribute(_ note: DidSaveNotification) {
        guard !note.isEmpty else { return }
        let targets = state.withLock { s in s.contexts.values.compactMap(\.context).filter { $0.identifier != note.context } }
        for context in targets {
            context.enqueue {
                // Load the updated objects first, so observers of this context see every update.
                // One that cannot be read (deleted since) is left to the merge, which says so.
                // try?: an object that cannot be read is left to the merge, which says so
                for id in note.updated { _ = try? context.existingObject(with: id) }
                _ = context.mergeChanges(fromContextDidSave: note)
            }
        }
    }
}

/// A registered context, held weakly: a released stack's context leaves the registry.
private struct WeakRegistered: Sendable {
    weak var context: ManagedObjectContext?
    init(_ context: ManagedObjectContext) { self.context = context }
}
