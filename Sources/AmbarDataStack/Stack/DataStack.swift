import AmbarCore
import AmbarSQLite
import Dispatch
import Foundation
import Logging
import Synchronization

/// The Ambar stack: a main context for the UI-like main queue, importer contexts that write
/// through their own coordinator, temporary and editor contexts — and the smart merge that brings
/// importer saves into the main context.
///
/// ```swift
/// let stack = DataStack(model: .model(model)) { result in
///     // on the main queue, exactly once
/// }
/// try await stack.load()            // or wait for the completion
/// let main = try stack.mainContext
/// let importer = try stack.importerContext()
/// ```
///
/// Setup runs in the background; ``isReady`` turns true when everything is usable. Before that,
/// the context accessors throw ``AmbarError/stackNotReady`` (they never crash).
public final class DataStack: Sendable {
    /// What kind of store the stack opens.
    public enum StoreType: Sendable, Hashable {
        /// An SQLite file.
        case sqlite
        /// A store in memory (one coordinator, nothing on disk).
        case inMemory
        /// A store in a database on a server, for processes on several hosts
        /// (`import AmbarPostgres`, then `.postgres(url)`).
        case server(ServerStoreDescription)
    }

    /// The store type.
    public let storeType: StoreType
    /// The store file; `nil` for an in-memory store or a store on a server.
    public let storeURL: URL?

    /// Where the store is, as its coordinators open it.
    public var storeDescription: StoreDescription {
        switch storeType {
        case .sqlite: return storeURL.map { .sqlite($0) } ?? .inMemory
        case .inMemory: return .inMemory
        case .server(let server): return .server(server)
        }
    }
    /// The stack's name (the default store name and directory).
    public let name: String
    /// Whether the main and writer coordinators are separate (always false in memory).
    public let isUsingSeparateCoordinators: Bool

    private struct State {
        var model: ManagedObjectModel?
        var main: ManagedObjectContext?
        var mainCoordinator: PersistentStoreCoordinator?
        var writerCoordinator: PersistentStoreCoordinator?
        var failure: AmbarError?
        var waiters: [CheckedContinuation<Result<Void, AmbarError>, Never>] = []
        var completion: (@MainActor @Sendable (Result<Void, AmbarError>) -> Void)?
        var mergeObservations: [ContextObservation] = []
        var vended: [WeakContext] = []
        var deleted = false
    }

    private struct WeakContext: @unchecked Sendable {
        weak var context: ManagedObjectContext?
    }

    private let state = Locked(State())
    private let ready = Atomic<Bool>(false)
    private let readOnly = Atomic<Bool>(false)
    private let merging = Atomic<Bool>(true)
    private let modelSource: ModelSource
    /// What a damaged store file does at setup.
    public let damagedStoreRecovery: DamagedStoreRecovery
    /// The store file setup moves to ``storeURL`` when it exists (see `relocatingFrom`).
    public let relocationSource: URL?
    private let classes: [ManagedObject.Type]
    /// A `postgres://` URL passed as `storeURL` of an SQLite stack: setup fails, saying how to open it.
    private let serverURLGivenAsFile: URL?
    static let logger = Logger(label: "ambar.stack")

    /// Whether `url` names a database server (`postgres://`, `postgresql://`) rather than a file.
    static func isServerURL(_ url: URL) -> Bool {
        ["postgres", "postgresql"].contains(url.scheme?.lowercased() ?? "")
    }

    /// Creates a stack and sets it up in the background; returns at once.
    ///
    /// - Parameters:
    ///   - storeType: SQLite (default), in-memory, or a database server (`.postgres(url)` from
    ///     `AmbarPostgres`; `storeURL` is then ignored).
    ///   - model: the model, or the name of a model file.
    ///   - classes: managed-object subclasses for the model's entities.
    ///   - storeURL: a directory (the file is `<name>.sqlite` in it) or a full file path; missing
    ///     directories are created. `nil`: `$STATE_DIRECTORY`, else `$XDG_DATA_HOME/<name>`, else
    ///     `~/.local/share/<name>`.
    ///   - name: the store name; the process name by default.
    ///   - usingSeparateCoordinators: whether importers write through their own coordinator.
    ///   - damagedStoreRecovery: what a damaged store file does: fail (the default) or quarantine.
    ///   - relocatingFrom: where the store used to be (a directory or a file, as `storeURL`). When
    ///     a store is there, setup first moves it to `storeURL` (Ambar's `migratingFrom:to:`):
    ///     copied with SQLite's backup API, renamed into place, then the old file and its
    ///     `-wal`/`-shm` deleted. It refuses while another process has the old store open. Safe to
    ///     pass on every launch: with nothing at the old path it does nothing.
    ///   - completion: runs exactly once, on the main queue, when setup succeeded or failed.
    public convenience init(
        storeType: StoreType = .sqlite, model: ModelSource, classes: [ManagedObject.Type] = [],
        storeURL: URL? = nil, name: String? = nil, usingSeparateCoordinators: Bool = true,
        damagedStoreRecovery: DamagedStoreRecovery = .fail, relocatingFrom: URL? = nil,
        completion: @escaping @MainActor @Sendable (Result<Void, AmbarError>) -> Void = { _ in }
    ) {
        self.init(
            storeType: storeType, model: model, classes: classes, storeURL: storeURL, name: name, usingSeparateCoordinators: usingSeparateCoordinators,
            recovery: damagedStoreRecovery, relocatingFrom: relocatingFrom)
        state.withLock { $0.completion = completion }
        DispatchQueue.global(qos: .userInitiated).async { self.setUp() }
    }

    private init(
        storeType: StoreType, model: ModelSource, classes: [ManagedObject.Type], storeURL: URL?, name: String?, usingSeparateCoordinators: Bool,
        recovery: DamagedStoreRecovery, relocatingFrom: URL?
    ) {
        self.damagedStoreRecovery = recovery
        let resolvedName = name ?? StoreLocation.defaultName
        self.relocationSource = relocatingFrom.map { StoreLocation.storeFile(for: $0, name: resolvedName) }
        self.storeType = storeType
        self.name = resolvedName
        // A server's URL is not a file: setup says how to open it (never a file named after it).
        let misused = storeType == .sqlite && storeURL.map(Self.isServerURL) == true ? storeURL : nil
        self.serverURLGivenAsFile = misused
        switch storeType {
        case .sqlite where misused == nil: self.storeURL = StoreLocation.storeFile(for: storeURL, name: resolvedName)
        case .sqlite, .inMemory, .server: self.storeURL = nil
        }
        self.isUsingSeparateCoordinators = storeType == .inMemory ? false : usingSeparateCoordinators
        self.modelSource = model
        self.classes = classes
    }

    /// Creates a stack and sets it up on the calling thread: for tools and tests.
    ///
    /// - Throws: the setup failure (``AmbarError``), e.g. ``AmbarError/storeCannotOpen(path:reason:cause:)``.
    public static func open(
        storeType: StoreType = .sqlite, model: ModelSource, classes: [ManagedObject.Type] = [],
        storeURL: URL? = nil, name: String? = nil, usingSeparateCoordinators: Bool = true,
        damagedStoreRecovery: DamagedStoreRecovery = .fail, relocatingFrom: URL? = nil
    ) throws(AmbarError) -> DataStack {
        let stack = DataStack(
            storeType: storeType, model: model, classes: classes, storeURL: storeURL, name: name, usingSeparateCoordinators: usingSeparateCoordinators,
            recovery: damagedStoreRecovery, relocatingFrom: relocatingFrom)
        stack.setUp(synchronous: true)
        if let failure = stack.state.withLock({ $0.failure }) { throw failure }
        return stack
    }

    // MARK: - Setup

    private func setUp(synchronous: Bool = false) {
        let result: Result<Void, AmbarError>
        do throws(AmbarError) {
            if let given = serverURLGivenAsFile {
                var shown = URLComponents(url: given, resolvingAgainstBaseURL: false)
                shown?.password = nil
                shown?.query = nil
                throw AmbarError.invalidArgument(
                    "\(shown?.string ?? "the store URL") is a PostgreSQL database, not a file: import AmbarPostgres and open the stack with storeType: .postgres(url)"
                )
            }
            let model = try modelSource.load(classes: classes)
            let main: PersistentStoreCoordinator
            let writer: PersistentStoreCoordinator
            if case .server(let server) = storeType {
                if let relocationSource {
                    throw AmbarError.invalidArgument(
                        "a stack on a database server cannot take over the store file at \(relocationSource.path); copy it with `sync-agent` (import) instead")
                }
                main = try PersistentStoreCoordinator(model: model, store: .server(server), name: "\(name).main")
                writer =
                    isUsingSeparateCoordinators
                    ? try PersistentStoreCoordinator(model: model, store: .server(server), name: "\(name).writer")
                    : main
            } else if let storeURL {
                if let relocationSource { _ = try SQLiteStoreRelocation.relocate(from: relocationSource, to: storeURL) }
                try StoreLocation.prepare(storeURL)
                main = try PersistentStoreCoordinator(model: model, store: .sqlite(storeURL), name: "\(name).main", recovery: damagedStoreRecovery)
                writer =
                    isUsingSeparateCoordinators
                    ? try PersistentStoreCoordinator(model: model, store: .sqlite(storeURL), name: "\(name).writer")
                    : main
            } else {
                if let relocationSource {
                    throw AmbarError.invalidArgument(
                        "an in-memory stack cannot take over the store file at \(relocationSource.path); open it with storeType: .sqlite")
                }
                main = try PersistentStoreCoordinator(model: model, store: .inMemory, name: "\(name).memory")
                writer = main
            }
            let mainContext = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: main, name: "\(name).main")
            mainContext.mergePolicy = .mergeByPropertyStoreTrump
            if readOnly.load(ordering: .acquiring) { mainContext.saveRefusal = Self.readOnlyReason }
            // The writer's saves and batches, and batches on the main coordinator too.
            let observation = writer.observeDidSave { [weak self] note in self?.writerDidSave(note) }
            let mainBatches =
                main === writer
                ? nil
                : main.observeDidSave { [weak self] note in
                    if note.isBatch { self?.writerDidSave(note) }
                }
            state.withLock {
                $0.model = model
                $0.mainCoordinator = main
                $0.writerCoordinator = writer
                $0.main = mainContext
                $0.mergeObservations = [observation] + [mainBatches].compactMap { $0 }
            }
            result = .success(())
        } catch {
            Self.logger.error("Stack '\(name)' setup failed: \(error)")
            state.withLock { $0.failure = error }
            result = .failure(error)
        }
        finish(result, onMainQueue: !synchronous)
    }

    /// Marks the stack ready (or failed), wakes `load()` callers and runs the completion once.
    /// For the asynchronous setup this happens on a main-queue turn, as in Ambar: `isReady` is
    /// never true before the main queue has seen the stack.
    private func finish(_ result: Result<Void, AmbarError>, onMainQueue: Bool) {
        let work: @Sendable () -> Void = { [self] in
            if case .success = result { ready.store(true, ordering: .releasing) }
            let (waiters, completion) = state.withLock { s in
                defer {
                    s.waiters = []
                    s.completion = nil
                }
                return (s.waiters, s.completion)
            }
            for waiter in waiters { waiter.resume(returning: result) }
            if let completion { MainActor.assumeIsolated { completion(result) } }
        }
        if onMainQueue { DispatchQueue.main.async(execute: work) } else { work() }
    }

    /// Whether setup finished and every context is usable.
    public var isReady: Bool { ready.load(ordering: .acquiring) }

    /// Waits until setup finished; returns at once when it already has.
    ///
    /// - Throws: the setup failure.
    public func load() async throws(AmbarError) {
        let result: Result<Void, AmbarError> = await withCheckedContinuation { continuation in
            let isReady = ready.load(ordering: .acquiring)
            let outcome: Result<Void, AmbarError>? = state.withLock { s in
                if isReady { return .success(()) }
                if s.failure != nil && s.waiters.isEmpty && s.completion == nil, let failure = s.failure { return .failure(failure) }
                s.waiters.append(continuation)
                return nil
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
        try result.get()
    }

    private func require<T: Sendable>(_ value: (State) -> T?) throws(AmbarError) -> T {
        let isReady = ready.load(ordering: .acquiring)
        let (found, failure) = state.withLock { s -> (T?, AmbarError?) in (value(s), s.failure) }
        if isReady, let found { return found }
        throw failure ?? .stackNotReady
    }

    // MARK: - Coordinators and contexts

    /// The model the stack opened.
    public var model: ManagedObjectModel { get throws(AmbarError) { try require { $0.model } } }
    /// The coordinator of the main context (and of temporary contexts).
    public var mainCoordinator: PersistentStoreCoordinator { get throws(AmbarError) { try require { $0.mainCoordinator } } }
    /// The coordinator importers write through; the main one when coordinators are not separate.
    public var writerCoordinator: PersistentStoreCoordinator { get throws(AmbarError) { try require { $0.writerCoordinator } } }

    /// The main-queue context, on the main coordinator, with the store-trump policy. Use it from
    /// the main thread or through `perform`.
    public var mainContext: ManagedObjectContext { get throws(AmbarError) { try require { $0.main } } }
    /// Another name for ``mainContext``.
    public var viewContext: ManagedObjectContext { get throws(AmbarError) { try mainContext } }

    /// A new private-queue context on the writer coordinator, with the object-trump policy: its
    /// saves go straight to the store and are merged into the main context.
    public func importerContext() throws(AmbarError) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try writerCoordinator, name: "\(name).importer")
        context.mergePolicy = .mergeByPropertyObjectTrump
        track(context)
        return context
    }

    /// A new private-queue context on the main coordinator that never writes: ``ManagedObjectContext/save()``
    /// throws ``AmbarError/saveRefused(context:reason:)`` and keeps the changes in memory.
    public func temporaryContext() throws(AmbarError) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try mainCoordinator, name: "\(name).temporary")
        context.mergePolicy = .rollback
        context.saveRefusal = "temporary contexts never write to the store; copy what you need into an importer or editor context"
        track(context)
        return context
    }

    /// A new private-queue child of the main context, with the object-trump policy.
    /// ``ManagedObjectContext/save(propagating:)`` saves it into main and main to the store.
    ///
    /// - Throws: ``AmbarError/saveRefused(context:reason:)`` when the main context is read-only.
    public func editorContext() throws(AmbarError) -> ManagedObjectContext {
        let main = try mainContext
        if isMainContextReadOnly {
            throw .saveRefused(
                context: "\(name).editor", reason: "the main context is read-only, so an editor could never save; set isMainContextReadOnly to false first")
        }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, parent: main, name: "\(name).editor")
        context.mergePolicy = .mergeByPropertyObjectTrump
        track(context)
        return context
    }

    /// Keeps a weak reference to a context the stack vended, so that saving to disk and
    /// shutting down can reach the contexts still in use.
    package func track(_ context: ManagedObjectContext) {
        state.withLock { s in
            s.vended.removeAll { $0.context == nil }
            s.vended.append(WeakContext(context: context))
        }
    }

    static let readOnlyReason = "the main context is read-only (isMainContextReadOnly); save through an importer or editor context"

    /// Whether the main context refuses to save (its changes stay in memory).
    public var isMainContextReadOnly: Bool {
        get { readOnly.load(ordering: .acquiring) }
        set {
            readOnly.store(newValue, ordering: .releasing)
            state.withLock { $0.main }?.saveRefusal = newValue ? Self.readOnlyReason : nil
        }
    }

    /// Whether saves of contexts on the writer coordinator are merged into the main context
    /// (default true).
    public var shouldMergeIncomingSavedObjects: Bool {
        get { merging.load(ordering: .acquiring) }
        set { merging.store(newValue, ordering: .releasing) }
    }

    /// The smart merge: saves of root contexts on the writer coordinator — importers — and batch
    /// operations on either coordinator are merged into the main context asynchronously on its
    /// queue. Only objects registered in main are refreshed. Main's own saves (when it shares the
    /// writer coordinator), its children's, temporary contexts' and other stacks' saves are never
    /// merged (decision D2); main's own batches are, since they bypass it.
    private func writerDidSave(_ note: DidSaveNotification) {
        guard merging.load(ordering: .acquiring), let main = state.withLock({ $0.main }),
            note.context != main.identifier || note.isBatch, !note.isEmpty
        else { return }
        main.enqueue { main.mergeChanges(fromContextDidSave: note) }
    }

    // MARK: - Deleting the store

    /// Whether ``deleteStore()`` ran.
    public var isStoreDeleted: Bool { state.withLock { $0.deleted } }

    /// Deletes the store file with its -wal and -shm files and resets every context the stack
    /// made. Later saves and fetches throw ``AmbarError/storeDeleted``. A second call does nothing.
    ///
    /// - Throws: ``AmbarError/stackNotReady`` before setup, or a storage error when a file cannot
    ///   be removed.
    public func deleteStore() throws(AmbarError) {
        let (main, coordinators, contexts, already) = state.withLock {
            s -> (ManagedObjectContext?, [PersistentStoreCoordinator], [ManagedObjectContext], Bool) in
            defer { s.deleted = true }
            let coordinators = [s.mainCoordinator, s.writerCoordinator].compactMap { $0 }
            return (s.main, coordinators, s.vended.compactMap(\.context), s.deleted)
        }
        if already { return }
        guard let main else { throw state.withLock({ $0.failure }) ?? .stackNotReady }
        for coordinator in coordinators { coordinator.markDeletedAndClose() }
        for context in [main] + contexts {
            context.performAndWait { context.resetOnQueue() }
        }
        guard let storeURL else { return }
        for suffix in ["", "-wal", "-shm"] {
            let path = storeURL.path + suffix
            guard FileManager.default.fileExists(atPath: path) else { continue }
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw .storage(operation: "delete store", code: -1, message: "cannot remove \(path): \(error.localizedDescription)", cause: ErrorCause(error))
            }
        }
    }
}
