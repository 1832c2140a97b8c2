import AmbarCore
import AmbarDataStack
import AmbarResults
import Foundation

/// Y—Persistence's `PersistenceManager` on AmbarStack: models in and out by uid, records on
/// worker contexts, sync markers, clear and destroy.
///
/// Decisions where the seed was ambiguous or wrong (see Sources/AmbarStack/Documentation.docc/ComingFromASeedLibrary.md):
/// - D3: worker saves *are* merged into ``mainContext`` (the seed left it stale).
/// - D5: the thread-cached context is keyed per manager and dropped on ``destroy()``.
/// - D6: an empty uid list means no records, for fetches as for deletes; `nil` means all.
/// - D7: saving models and deleting by predicate are each one transaction: on failure nothing changes.
///
/// Managed records stay on their context's queue: the record methods run on the context you
/// pass (or ``contextForThread()``'s) and throw ``AmbarError/wrongQueue(context:operation:)`` when
/// called off it — wrap them in `context.performAndWait { }`. The model methods are safe on any
/// thread.
open class PersistenceManager: @unchecked Sendable {
    /// The merge policy of the main context and of every worker.
    public let mergePolicy: MergePolicy
    /// The store's name (its file is `<name>.sqlite`).
    public let name: String
    private let model: ModelSource
    private let classes: [ManagedObject.Type]
    private let storeType: DataStack.StoreType
    private let storeURL: URL?
    private let identifier = UUID().uuidString
    private let state = Locked(State())

    private struct State {
        var stack: DataStack?
        var loadRequested = false
        var generation = 0
    }

    /// A manager for `model`; nothing is opened until ``load(completion:)``.
    ///
    /// - Parameters:
    ///   - model: where the model comes from (a named model file, or a model).
    ///   - classes: managed-object subclasses for the model's entities.
    ///   - storeType: SQLite (the default), in memory, or PostgreSQL.
    ///   - storeURL: a directory or a store file; the library default location when `nil`.
    ///   - name: the store name; the model's name when it is a named model file.
    ///   - mergePolicy: for the main context and the workers (`.error` by default, as the seed).
    public init(
        model: ModelSource, classes: [ManagedObject.Type] = [], storeType: DataStack.StoreType = .sqlite,
        storeURL: URL? = nil, name: String? = nil, mergePolicy: MergePolicy = .error
    ) {
        self.model = model
        self.classes = classes
        self.storeType = storeType
        self.storeURL = storeURL
        self.mergePolicy = mergePolicy
        if let name { self.name = name } else if case .named(let modelName, _) = model { self.name = modelName } else { self.name = StoreLocation.defaultName }
    }

    /// Opens the store in the background; `completion` runs once on the main queue with whether it
    /// worked. A second call completes with `false` (the seed's behaviour).
    public func load(completion: @escaping @MainActor @Sendable (Bool) -> Void = { _ in }) {
        let first = state.withLock { s -> Bool in
            defer { s.loadRequested = true }
            return !s.loadRequested
        }
        guard first else {
            DispatchQueue.main.async { MainActor.assumeIsolated { completion(false) } }
            return
        }
        // try?: the seed library's completion takes only whether the store loaded
        let stack = makeStack { result in completion((try? result.get()) != nil) }
        state.withLock { $0.stack = stack }
    }

    /// Opens the store and waits for it.
    ///
    /// - Throws: the setup failure, or ``AmbarError/invalidArgument(_:)`` when already loaded.
    public func load() async throws(AmbarError) {
        let stack = try state.withLock { s throws(AmbarError) -> DataStack in
            guard !s.loadRequested else { throw .invalidArgument("the persistence manager is already loaded; load it once") }
            s.loadRequested = true
            let stack = makeStack { _ in }
            s.stack = stack
            return stack
        }
        try await stack.load()
    }

    private func makeStack(_ completion: @escaping @MainActor @Sendable (Result<Void, AmbarError>) -> Void) -> DataStack {
        DataStack(storeType: storeType, model: model, classes: classes, storeURL: storeURL, name: name, completion: completion)
    }

    /// The stack underneath (for everything the seed reached through its container).
    public var stack: DataStack {
        get throws(AmbarError) {
            guard let stack = state.withLock({ $0.stack }) else { throw .stackNotReady }
            return stack
        }
    }

    /// The main-queue context, with ``mergePolicy``. Use it on the main queue.
    public var mainContext: ManagedObjectContext {
        get throws(AmbarError) {
            let context = try stack.mainContext
            context.mergePolicy = mergePolicy
            return context
        }
    }

    /// A new private-queue context for one piece of writing, with ``mergePolicy``; its saves go
    /// to the store and are merged into ``mainContext``.
    public var workerContext: ManagedObjectContext {
        get throws(AmbarError) {
            let context = try stack.importerContext()
            context.mergePolicy = mergePolicy
            return context
        }
    }

    /// ``mainContext`` on the main thread; elsewhere one worker context per thread and manager,
    /// reused on that thread until ``destroy()``. Use it through `performAndWait`.
    public func contextForThread() throws(AmbarError) -> ManagedObjectContext {
        if Thread.isMainThread { return try mainContext }
        let generation = state.withLock { $0.generation }
        let key = "ambar.persistence.\(identifier)"
        if let cached = Thread.current.threadDictionary[key] as? CachedContext, cached.generation == generation {
            return cached.context
        }
        let context = try workerContext
        Thread.current.threadDictionary[key] = CachedContext(context: context, generation: generation)
        return context
    }

    /// Deletes the store files and opens a fresh, empty store; `completion` runs on the main queue.
    /// Contexts handed out before — thread-cached ones included — are reset and no longer used.
    open func destroy(completion: @escaping @MainActor @Sendable (Bool) -> Void) throws(AmbarError) {
        try stack.deleteStore()
        // try?: the seed library's completion takes only whether the store loaded
        let stack = makeStack { result in completion((try? result.get()) != nil) }
        state.withLock {
            $0.stack = stack
            $0.generation += 1
        }
    }

    /// Deletes the store files, opens a fresh store and waits for it.
    public func destroy() async throws(AmbarError) {
        try stack.deleteStore()
        let stack = makeStack { _ in }
        state.withLock {
            $0.stack = stack
            $0.generation += 1
        }
        try await stack.load()
    }

    // MARK: - Clearing (overridable)

    /// Deletes every row of `entityName` in the store at once and merges the deletions into
    /// ``mainContext``.
    open func batchDeleteAll(entityName: String) throws(AmbarError) {
        let context = try workerContext
        let result = try context.performAndWait { () throws(AmbarError) -> BatchResult in
            try context.batchDelete(FetchRequest<ManagedObject>(entityName: entityName))
        }
        guard !result.objectIDs.isEmpty else { return }
        let main = try mainContext
        let note = result.notification(.deleted)
        if main.isOnQueue {
            _ = main.mergeChanges(fromContextDidSave: note)
        } else {
            main.enqueue { _ = main.mergeChanges(fromContextDidSave: note) }
        }
    }

    /// The entities ``clear()`` empties: every entity of the model. Override to keep some (e.g.
    /// settings that survive a logout).
    open func entityNamesForClear() throws(AmbarError) -> [String] {
        try stack.model.entityNames
    }

    /// Empties every entity of ``entityNamesForClear()`` with ``batchDeleteAll(entityName:)``.
    open func clear() throws(AmbarError) {
        for name in try entityNamesForClear() { try batchDeleteAll(entityName: name) }
    }
}

/// A context cached in a thread's dictionary, with the manager generation it belongs to.
private final class CachedContext: NSObject {
    let context: ManagedObjectContext
    let generation: Int
    init(context: ManagedObjectContext, generation: Int) {
        self.context = context
        self.generation = generation
    }
}
