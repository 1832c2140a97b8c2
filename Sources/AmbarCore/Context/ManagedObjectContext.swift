import Dispatch
import Foundation
import Logging

/// An object graph in memory: fetches objects, tracks their changes and saves them.
///
/// A context runs on its own queue: the main queue (``ConcurrencyType/mainQueue``) or a private
/// serial queue. Every call that touches the context or its objects must run on that queue —
/// inside ``perform(_:)`` or ``performAndWait(_:)``, or directly on the main thread for a
/// main-queue context. Calls made elsewhere throw ``AmbarError/wrongQueue(context:operation:)``.
/// The context itself is `Sendable`; its objects are not, so pass ``ManagedObjectID``s between
/// queues.
///
/// A context has either a coordinator (it saves to the store) or a parent context (its saves
/// become the parent's unsaved changes).
public final class ManagedObjectContext: @unchecked Sendable {
    /// Which queue a context runs on.
    public enum ConcurrencyType: Sendable {
        /// The main queue.
        case mainQueue
        /// A private serial queue of its own.
        case privateQueue
    }

    struct Configuration {
        var name: String?
        var transactionAuthor: String?
        var mergePolicy: MergePolicy = .error
        var automaticallyMergesChangesFromParent = false
        var saveRefusal: String?
        var consumer: String?
        var lastSavedToken: Int64?
    }

    /// The queue the context runs on.
    public let concurrencyType: ConcurrencyType
    /// The coordinator the context (or its root ancestor) saves through.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The parent, for a child context; `nil` for a root context.
    public let parent: ManagedObjectContext?
    /// The context's identity in notifications.
    public let identifier = ContextIdentifier.next()

    let queue: DispatchQueue
    /// Marks each private context's queue with the context's identifier.
    static let queueKey = DispatchSpecificKey<UInt64>()
    private let configuration: Locked<Configuration>
    let state = ContextState()
    /// What this context's objects hold to reach it (``ManagedObject/managedObjectContext``).
    let link = ContextLink()
    let didSaveObservers = ObserverList<DidSaveNotification>()
    let objectsDidChangeObservers = ObserverList<ObjectsDidChangeNotification>()
    /// Saves of children into this context, for siblings that merge automatically.
    let childDidSaveObservers = ObserverList<DidSaveNotification>()
    /// Failures of calls that cannot throw (``observeFailures(_:)``).
    let failureObservers = ObserverList<ContextFailure>()
    private let automaticMerge = Locked<ContextObservation?>(nil)
    static let logger = Logger(label: "ambar.stack.context")

    /// Creates a root context on `coordinator`.
    public init(concurrencyType: ConcurrencyType, coordinator: PersistentStoreCoordinator, name: String? = nil) {
        self.concurrencyType = concurrencyType
        self.persistentStoreCoordinator = coordinator
        self.parent = nil
        self.configuration = Locked(Configuration(name: name))
        self.queue = Self.makeQueue(concurrencyType, name)
        if concurrencyType == .privateQueue { queue.setSpecific(key: Self.queueKey, value: identifier.raw) }
        _ = Self.mainQueueKey
        link.attach(self)
    }

    /// Creates a child of `parent`: its saves go into the parent, not to the store.
    public init(concurrencyType: ConcurrencyType, parent: ManagedObjectContext, name: String? = nil) {
        self.concurrencyType = concurrencyType
        self.persistentStoreCoordinator = parent.persistentStoreCoordinator
        self.parent = parent
        self.configuration = Locked(Configuration(name: name))
        self.queue = Self.makeQueue(concurrencyType, name)
        if concurrencyType == .privateQueue { queue.setSpecific(key: Self.queueKey, value: identifier.raw) }
        link.attach(self)
    }

    private static func makeQueue(_ type: ConcurrencyType, _ name: String?) -> DispatchQueue {
        switch type {
        case .mainQueue: return .main
        case .privateQueue: return DispatchQueue(label: "ambar.context.\(name ?? "private")")
        }
    }

    deinit {
        link.detach()
        automaticMerge.withLock { $0?.cancel() }
        // An object and its companion hold each other while the object is in a context.
        for object in state.registered.values { object.companion = nil }
    }

    // MARK: - Configuration

    /// A name for logs and notifications.
    public var name: String? {
        get { configuration.withLock { $0.name } }
        set { configuration.withLock { $0.name = newValue } }
    }

    /// The author recorded with this context's saves.
    public var transactionAuthor: String? {
        get { configuration.withLock { $0.transactionAuthor } }
        set { configuration.withLock { $0.transactionAuthor = newValue } }
    }

    /// The ledger token of this context's last save that reached the store, or `nil` before one
    /// did (a save with no changes, or into a parent, leaves it as it was). For a child saved with
    /// ``save(propagating:)``, the token of its root ancestor's save. Readable from any thread.
    ///
    /// Hand it to another process (in a reply, a message) so that it can wait until it holds what
    /// this save wrote: `SharedStoreSync.waitUntilMerged(token:timeout:)` in a process that shares
    /// the store, the `Ambar-After` header of `sync-agent serve` for an HTTP client.
    ///
    /// ```swift
    /// try context.performAndWait { () throws(AmbarError) in try context.save() }
    /// reply.token = context.lastSavedToken
    /// ```
    public var lastSavedToken: Int64? {
        configuration.withLock { $0.lastSavedToken }
    }

    /// Records the token of a save that reached the store.
    func recordSavedToken(_ token: Int64?) {
        guard let token else { return }
        configuration.withLock { $0.lastSavedToken = token }
    }

    /// How saves resolve conflicts; ``MergePolicy/error`` by default.
    public var mergePolicy: MergePolicy {
        get { configuration.withLock { $0.mergePolicy } }
        set { configuration.withLock { $0.mergePolicy = newValue } }
    }

    /// When the context refuses to save, the reason (temporary and read-only contexts).
    package var saveRefusal: String? {
        get { configuration.withLock { $0.saveRefusal } }
        set { configuration.withLock { $0.saveRefusal = newValue } }
    }

    /// The durable consumer whose handler this context serves, if any: its changes are saved by
    /// the consumer, with the consumer's position, through ``save(movingConsumer:from:to:)``; a
    /// plain ``save()`` is refused, so that no effect is ever saved without its position.
    package var consumer: String? {
        get { configuration.withLock { $0.consumer } }
        set { configuration.withLock { $0.consumer = newValue } }
    }

    /// Whether the context merges, on its own queue, the saves of other root contexts on its
    /// coordinator (for a root context) or saves into and of its parent (for a child).
    public var automaticallyMergesChangesFromParent: Bool {
        get { configuration.withLock { $0.automaticallyMergesChangesFromParent } }
        set {
            let changed = configuration.withLock { config -> Bool in
                defer { config.automaticallyMergesChangesFromParent = newValue }
                return config.automaticallyMergesChangesFromParent != newValue
            }
            guard changed else { return }
            automaticMerge.withLock { observation in
                observation?.cancel()
                observation = newValue ? startAutomaticMerging() : nil
            }
        }
    }

    private func startAutomaticMerging() -> ContextObservation {
        let me = identifier
        let handler: @Sendable (DidSaveNotification) -> Void = { [weak self] note in
            guard let self, note.context != me else { return }
            self.enqueue { self.mergeChanges(fromContextDidSave: note) }
        }
        if let parent {
            let a = parent.didSaveObservers.add(handler)
            let b = parent.childDidSaveObservers.add(handler)
            return ContextObservation {
                a.cancel()
                b.cancel()
            }
        }
        return persistentStoreCoordinator.observeDidSave(handler)
    }

    var displayName: String { name ?? "\(identifier)" }

    // MARK: - Queue

    /// Marks the main queue, which after `dispatchMain()` is drained by a worker thread rather
    /// than the main thread.
    static let mainQueueKey: DispatchSpecificKey<UInt8> = {
        let key = DispatchSpecificKey<UInt8>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()

    /// Whether the caller is on the context's queue — or acts for it: inside a
    /// ``performAndWait(_:)`` called from that queue, whose thread is blocked until the block
    /// returns, or in code that one of this context's blocks runs synchronously on its own thread
    /// (through another queue's `sync`, say), which cannot run while the block does. Another
    /// thread is never on the queue, a `Task` started inside a block included.
    public var isOnQueue: Bool { queueTicket.isCurrent }

    /// The context's queue as a value, to ask whether the caller is on it without the context.
    package var queueTicket: QueueTicket {
        QueueTicket(marker: concurrencyType == .mainQueue ? LentQueues.main : identifier.raw)
    }

    /// The queues a block run now on this context's queue may act for: those the caller is on
    /// (and was lent), since the caller waits, blocked, until the block returns.
    private func queuesLentByCaller() -> Set<UInt64> {
        var lent = LentQueues.current
        if Thread.isMainThread || DispatchQueue.getSpecific(key: Self.mainQueueKey) == 1 { lent.insert(LentQueues.main) }
        if let running = LentQueues.running { lent.insert(running) }
        return lent
    }

    /// Throws ``AmbarError/wrongQueue(context:operation:)`` unless the caller is on the context's
    /// queue (or acts for it, inside ``performAndWait(_:)``); `operation` names what was tried.
    package func checkQueue(_ operation: String) throws(AmbarError) {
        guard isOnQueue else { throw .wrongQueue(context: displayName, operation: operation) }
    }

    func checkQueue(for object: ManagedObject) {
        if !isOnQueue {
            Self.logger.error(
                "Object \(object.objectID.uriString) was used off the queue of context '\(displayName)'. Use context.perform { } and pass object IDs between queues."
            )
        }
    }

    /// Runs `block` on the context's queue and returns its result.
    ///
    /// Objects-did-change notifications for the block's edits are posted when it ends. Objects
    /// stay on the queue: return values (`Sendable` ones, such as object IDs or plain values), not
    /// objects.
    ///
    /// ```swift
    /// let titles = try await context.perform { () throws(AmbarError) in
    ///     try context.fetch(FetchRequest<TaskItem>()).map(\.title)
    /// }
    /// ```
    public func perform<T: Sendable, E: Error>(_ block: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(
                    returning: self.runBlock { () -> Result<T, E> in
                        do throws(E) { return .success(try block()) } catch { return .failure(error) }
                    })
            }
        }
        return try result.get()
    }

    /// Runs `block` on the context's queue and waits for it. Re-entrant: on the queue already, it
    /// runs at once.
    public func performAndWait<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T {
        let result: Result<T, E>
        if isOnQueue {
            result = runBlock { () -> Result<T, E> in
                do throws(E) { return .success(try block()) } catch { return .failure(error) }
            }
        } else {
            // The caller blocks until the block returns: the block may act for the caller's
            // queues (a child of the main context saving into it or faulting through it while the
            // main thread waits on the child), so it never waits for a queue that waits for it.
            let lent = queuesLentByCaller()
            result = queue.sync {
                LentQueues.$current.withValue(lent) {
                    runBlock { () -> Result<T, E> in
                        do throws(E) { return .success(try block()) } catch { return .failure(error) }
                    }
                }
            }
        }
        return try result.get()
    }

    /// Schedules `block` on the context's queue and returns at once.
    public func enqueue(_ block: @escaping @Sendable () -> Void) {
        queue.async { self.runBlock(block) }
    }

    private func runBlock<T>(_ block: () -> T) -> T {
        state.depth += 1
        let marker = concurrencyType == .mainQueue ? LentQueues.main : identifier.raw
        let previousMark = marker == LentQueues.main ? nil : RunningBlockMarker.enter(marker)
        let result = LentQueues.$running.withValue(marker) { block() }
        if let previousMark { RunningBlockMarker.leave(restoring: previousMark) }
        state.depth -= 1
        if state.depth == 0 { processPendingChanges() }
        return result
    }

    // MARK: - Notifications

    /// Calls `callback` on the context's queue after each save.
    public func observeDidSave(_ callback: @escaping @Sendable (DidSaveNotification) -> Void) -> ContextObservation {
        didSaveObservers.add(callback)
    }

    /// Calls `callback` on the context's queue whenever its objects change.
    public func observeObjectsDidChange(_ callback: @escaping @Sendable (ObjectsDidChangeNotification) -> Void) -> ContextObservation {
        objectsDidChangeObservers.add(callback)
    }

    /// The did-save notifications posted from now on.
    public func didSaveNotifications() -> AsyncStream<DidSaveNotification> { didSaveObservers.stream() }

    /// The objects-did-change notifications posted from now on.
    public func objectsDidChangeNotifications() -> AsyncStream<ObjectsDidChangeNotification> {
        objectsDidChangeObservers.stream()
    }

    /// Posts one objects-did-change notification for the edits made since the last one.
    /// Contexts call this at the end of each `perform` block and before saving.
    public func processPendingChanges() {
        guard !state.pendingInserted.isEmpty || !state.pendingUpdated.isEmpty || !state.pendingDeleted.isEmpty else { return }
        let note = ObjectsDidChangeNotification(
            context: identifier, inserted: state.pendingInserted,
            updated: state.pendingUpdated.subtracting(state.pendingInserted).subtracting(state.pendingDeleted),
            deleted: state.pendingDeleted, refreshed: [], invalidated: [], invalidatedAll: false)
        for id in state.pendingInserted { state.registered[id]?.markInsertAnnounced() }
        state.announcedPendingChanges()
        objectsDidChangeObservers.post(note)
    }

    func postObjectsDidChange(_ note: ObjectsDidChangeNotification) {
        if !note.isEmpty { objectsDidChangeObservers.post(note) }
    }

    // MARK: - Objects

    /// The objects registered in the context (fetched, inserted or faulted in).
    public var registeredObjects: Set<ManagedObject> { Set(state.registered.values) }
    /// The number of registered objects.
    public var registeredObjectCount: Int { state.registered.count }
    /// Objects inserted and not yet saved.
    public var insertedObjects: Set<ManagedObject> { Set(state.inserted.values) }
    /// Objects with unsaved changes (not inserted or deleted).
    public var updatedObjects: Set<ManagedObject> { Set(state.updated.values.filter(\.isUpdated)) }
    /// Objects deleted and not yet saved.
    public var deletedObjects: Set<ManagedObject> { Set(state.deleted.values) }
    /// Whether there is anything to save.
    public var hasChanges: Bool {
        !state.inserted.isEmpty || !state.deleted.isEmpty || state.updated.values.contains(where: \.isUpdated)
    }

    /// A number no results-controller pass in this context used before (see
    /// ``ContextState/nextResultsPass()``). Call on the context's queue.
    package func nextResultsPass() -> UInt64 { state.nextResultsPass() }

    package func layoutIfKnown(_ name: String) -> EntityLayout? { persistentStoreCoordinator.model.resolved.entities[name] }

    /// Inserts a new object of `T`'s entity.
    ///
    /// - Throws: ``AmbarError/wrongQueue(context:operation:)``, ``AmbarError/unknownEntity(_:)``, or
    ///   ``AmbarError/invalidModel(_:)`` when the entity is abstract or mapped to a class that is
    ///   not `T` (or a subclass of it). Nothing is inserted then.
    public func insert<T: ManagedObject>(_ type: T.Type) throws(AmbarError) -> T {
        try checkQueue("insert")
        // An importer inserts one class after another: the layout of the last class inserted is
        // kept, so the class's entity name and its layout are not looked up again.
        let key = ObjectIdentifier(T.self)
        if let last = state.lastTypedInsert, last.type == key {
            return unsafeDowncast(try insertObject(layout: last.layout, attributes: []), to: T.self)
        }
        let layout = try persistentStoreCoordinator.model.resolved.layout(T.entityName)
        // Checked before anything is inserted: a refused insert leaves no object behind.
        guard layout.objectClass is T.Type else {
            throw .invalidModel("entity '\(T.entityName)' is mapped to \(layout.objectClass), not \(T.self); register \(T.self) with the model")
        }
        let object = try insertObject(layout: layout, attributes: [])
        state.lastTypedInsert = (key, layout)
        return unsafeDowncast(object, to: T.self)
    }

    /// Inserts a new object of the entity named `entityName`.
    @discardableResult
    public func insertObject(entityName: String) throws(AmbarError) -> ManagedObject {
        try insertObject(entityName: entityName, attributes: [])
    }

    /// Inserts a new object of the entity named `entityName` with `attributes`, by name, as an
    /// initializer gives them (after ``ManagedObject/awakeFromInsert()``). Each is checked
    /// against its attribute first: nothing is inserted when one is unknown or does not fit.
    package func insertObject(entityName: String, attributes: [(name: String, value: AttributeValue)]) throws(AmbarError) -> ManagedObject {
        try checkQueue("insert")
        return try insertObject(layout: try persistentStoreCoordinator.model.resolved.layout(entityName), attributes: attributes)
    }

    /// ``insertObject(entityName:attributes:)`` with the entity's layout found, once the caller
    /// has checked the queue.
    private func insertObject(layout: EntityLayout, attributes: [(name: String, value: AttributeValue)]) throws(AmbarError) -> ManagedObject {
        let entityName = layout.name
        guard !layout.description.isAbstract else {
            throw .invalidModel("entity '\(entityName)' is abstract; insert one of its sub-entities")
        }
        var given: [(slot: Int, value: AttributeValue)] = []
        given.reserveCapacity(attributes.count)
        for (name, value) in attributes {
            guard let i = layout.attributeSlot(name) else { throw .unknownProperty(entity: entityName, property: name) }
            guard let coerced = value.coerced(to: layout.attributes[i].type) else {
                throw .typeMismatch(entity: entityName, property: name, expected: layout.attributes[i].type, got: value.kindName)
            }
            given.append((i, coerced))
        }
        let id = ManagedObjectID.makeTemporary(for: layout)
        let object = layout.objectClass.init(ManagedObjectInitToken(layout: layout, objectID: id, context: self))
        object.becomeInserted()
        state.registered[id] = object
        state.addInserted(object)
        state.pendingInserted.insert(id)
        object.awakeFromInsert()
        for (i, value) in given { object.setInitialValue(value, at: i) }
        return object
    }

    /// The object with `id`: the registered instance, or a fault that loads on first access.
    /// No I/O happens here.
    ///
    /// - Throws: ``AmbarError/invalidObjectID(_:)`` when the ID is of another store or entity.
    public func object(with id: ManagedObjectID) throws(AmbarError) -> ManagedObject {
        try checkQueue("object(with:)")
        try persistentStoreCoordinator.validate(id)
        guard let object = registeredOrFault(for: id) else { throw .invalidObjectID("entity '\(id.entityName)' is not in the model") }
        return object
    }

    /// The object with `id`, loaded; throws if it does not exist.
    ///
    /// - Throws: ``AmbarError/objectNotFound(_:)`` when no such object exists.
    public func existingObject(with id: ManagedObjectID) throws(AmbarError) -> ManagedObject {
        try checkQueue("existingObject(with:)")
        try persistentStoreCoordinator.validate(id)
        if let object = state.registered[id] {
            if object.lifecycle == .deleted { throw .objectNotFound(id) }
            if object.hasData { return object }
        }
        guard let found = try loadStates([id])[id], !found.isDeleted,
            let object = registeredOrFault(for: id)
        else { throw .objectNotFound(id) }
        if !object.hasData { object.apply(found) }
        return object
    }

    /// The registered object for `id`, if any (no fault is made).
    public func registeredObject(for id: ManagedObjectID) -> ManagedObject? {
        state.registered[id]
    }

    func registeredOrFault(for id: ManagedObjectID) -> ManagedObject? {
        if let object = state.registered[id] { return object }
        guard let layout = persistentStoreCoordinator.model.resolved.entities[id.entityName] else { return nil }
        let object = layout.objectClass.init(ManagedObjectInitToken(layout: layout, objectID: id, context: self))
        state.registered[id] = object
        return object
    }

    /// Records that `object` changed (called by objects on every mutation).
    func objectDidChange(_ object: ManagedObject) {
        switch object.lifecycle {
        case .registered:
            state.recordUpdate(object)
        case .inserted:
            // Edits to an insert not yet announced are part of its insert notification.
            if object.insertAnnounced { state.recordEditOfAnnouncedInsert(object) }
        case .deleted, .invalidated, .detached:
            break
        }
    }

    /// Registers `object` under `newID` instead of its current ID (a temporary ID that became
    /// permanent). Two table operations: the removal hands back what it removed, and the insert
    /// what it replaced.
    func reregister(_ object: ManagedObject, as newID: ManagedObjectID) {
        let oldID = object.objectID
        guard oldID != newID else { return }
        if let removed = state.registered.removeValue(forKey: oldID), removed !== object {
            state.registered[oldID] = removed
        }
        object.takePermanentID(newID)
        if let other = state.registered.updateValue(object, forKey: newID), other !== object {
            // Its entry is this object's now, so `invalidate` leaves the table as it is.
            invalidate(other)
        }
    }

    func invalidate(_ object: ManagedObject) {
        let key = ObjectIdentifier(object)
        state.removeInserted(key)
        state.forgetUpdate(key)
        state.deleted.removeValue(forKey: key)
        if state.registered[object.objectID] === object { state.registered.removeValue(forKey: object.objectID) }
        object.markInvalid()
    }
}

/// The queue-confined state of a context. Read and written only on the context's queue, never
/// through overlapping accesses, so the run-time exclusivity checks of the tables every object
/// operation touches are switched off.
final class ContextState {
    @exclusivity(unchecked) var registered: [ManagedObjectID: ManagedObject] = [:]
    /// Objects inserted and not saved yet. Changed only through ``addInserted(_:)``,
    /// ``removeInserted(_:)`` and ``clearChanges()``, which keep ``insertionOrder`` in step.
    @exclusivity(unchecked) private(set) var inserted: [ObjectIdentifier: ManagedObject] = [:]
    /// The objects of ``inserted`` in the order they were inserted, while that order is known:
    /// no insert was taken back since the last save (``insertionOrderHolds``).
    @exclusivity(unchecked) private var insertionOrder: [ManagedObject] = []
    @exclusivity(unchecked) private var insertionOrderHolds = true
    /// Objects changed since their last save (some may have had their changes undone: check
    /// ``ManagedObject/isUpdated``). Entries leave only through ``forgetUpdate(_:)``,
    /// ``forgetAllUpdates()`` and ``clearChanges()``, which move ``changeEpoch`` on.
    @exclusivity(unchecked) private(set) var updated: [ObjectIdentifier: ManagedObject] = [:]
    @exclusivity(unchecked) var deleted: [ObjectIdentifier: ManagedObject] = [:]
    /// The idempotency key of the save in progress (``ManagedObjectContext/save(idempotencyKey:)``).
    var idempotencyKey: String?
    /// The consumer position moved by the save in progress (``ManagedObjectContext/save(movingConsumer:from:to:)``).
    var consumerMove: ConsumerMove?
    /// Outbox messages recorded since the last save (``ManagedObjectContext/recordOutboxMessage(topic:payload:key:)``).
    var outbox: [OutboxDraft] = []
    var pendingInserted = Set<ManagedObjectID>()
    /// The IDs of objects changed since the last objects-did-change notification. Cleared only
    /// through ``announcedPendingChanges()`` and ``clearChanges()``, which move ``changeEpoch`` on.
    @exclusivity(unchecked) private(set) var pendingUpdated = Set<ManagedObjectID>()
    /// Moves on whenever an object may have left ``updated`` or ``pendingUpdated``. An object
    /// that recorded a change in the current epoch is in both, so its next edits skip the two
    /// table writes (``recordUpdate(_:)``); a set of two properties used to write both twice.
    @exclusivity(unchecked) private(set) var changeEpoch: UInt64 = 1
    var pendingDeleted = Set<ManagedObjectID>()
    var depth = 0
    /// The class of the last object inserted by its class (`insert(Item.self)`) and its entity's
    /// layout (the model of a context never changes).
    var lastTypedInsert: (type: ObjectIdentifier, layout: EntityLayout)?
    /// The rows read for the merge being announced (see ``PrefetchedRows``); nil otherwise.
    var mergeRows: PrefetchedRows?
    /// The saves merged without prefetched rows, for screening rows read before them.
    var mergedSaves = MergedSaveLog()
    private var resultsPasses: UInt64 = 0

    /// Records `object` as inserted.
    func addInserted(_ object: ManagedObject) {
        if inserted.updateValue(object, forKey: ObjectIdentifier(object)) == nil {
            insertionOrder.append(object)
        } else {
            insertionOrderHolds = false
        }
    }

    /// Takes the inserted object with `key` back (deleted, invalidated or handed to a parent).
    func removeInserted(_ key: ObjectIdentifier) {
        if inserted.removeValue(forKey: key) != nil { insertionOrderHolds = false }
    }

    /// The inserted objects in the order they were inserted, or in no particular order once an
    /// insert was taken back since the last save.
    var insertedObjects: [ManagedObject] {
        insertionOrderHolds && insertionOrder.count == inserted.count ? insertionOrder : Array(inserted.values)
    }

    /// Forgets every inserted object (saved, or handed to a parent).
    func clearInserted() {
        inserted.emptyForReuse()
        insertionOrder.emptyForReuse()
        insertionOrderHolds = true
    }

    /// Forgets every unsaved change and the pending announcements of them (after a save, a
    /// rollback or a reset, which tell observers themselves).
    func clearChanges() {
        clearInserted()
        forgetAllUpdates()
        deleted.emptyForReuse()
        announcedPendingChanges()
        outbox.removeAll()
    }

    /// Records that a registered (saved) `object` changed: it joins ``updated`` and
    /// ``pendingUpdated`` once per epoch.
    func recordUpdate(_ object: ManagedObject) {
        guard object.recordedChangeEpoch != changeEpoch else { return }
        updated[ObjectIdentifier(object)] = object
        pendingUpdated.insert(object.objectID)
        object.recordedChangeEpoch = changeEpoch
    }

    /// Records an edit of an inserted object that observers were already told of.
    func recordEditOfAnnouncedInsert(_ object: ManagedObject) {
        pendingUpdated.insert(object.objectID)
    }

    /// Takes the object with `key` out of ``updated`` (its changes were saved, undone or
    /// dropped, or it was deleted).
    func forgetUpdate(_ key: ObjectIdentifier) {
        updated.removeValue(forKey: key)
        changeEpoch &+= 1
    }

    /// Empties ``updated`` (a child context's save handed its changes to the parent).
    func forgetAllUpdates() {
        updated.emptyForReuse()
        changeEpoch &+= 1
    }

    /// Forgets the pending announcements once an objects-did-change notification told them.
    func announcedPendingChanges() {
        pendingInserted.emptyForReuse()
        pendingUpdated.emptyForReuse()
        pendingDeleted.emptyForReuse()
        changeEpoch &+= 1
    }

    /// A number no results-controller pass in this context used before: objects a change touches
    /// are marked with it, so the pass over the results recognizes them without hashing.
    func nextResultsPass() -> UInt64 {
        resultsPasses += 1
        return resultsPasses
    }
}
