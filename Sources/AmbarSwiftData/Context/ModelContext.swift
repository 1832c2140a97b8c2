import AmbarStack
import Foundation
import Logging

/// Where models are inserted, fetched, changed, deleted and saved: SwiftData's `ModelContext`,
/// over an Ambar context.
///
/// ```swift
/// let context = ModelContext(container)
/// let trip = Trip(name: "Lisbon", start: .now)
/// context.insert(trip)
/// trip.stops.append(Stop(name: "Alfama"))         // inserted with it
/// try context.save()
///
/// let upcoming = try context.fetch(FetchDescriptor<Trip>(
///     predicate: #Predicate { $0.start > now },
///     sortBy: [SortDescriptor(\.start)]))
/// ```
///
/// A context runs on a queue of its own (``ModelContainer/mainContext`` on the main queue);
/// every call, and every read and write of its models' properties, runs on that queue, so
/// models and contexts may be used from any thread.
///
/// Calls that cannot throw (``insert(_:)``, property writes) report what fails instead: the
/// failure is logged and the next ``save()`` throws it, so that no failure is lost.
public final class ModelContext: Hashable {
    /// The container the context works on.
    public let container: ModelContainer
    let managedContext: ManagedObjectContext
    private let registry: ModelRegistry
    /// The context, held weakly, for its models and its Ambar context's callbacks.
    let link: ContextLink
    let failures = FailureLog()
    private var failureObservation: ContextObservation?
    private var changeObservation: ContextObservation?
    /// Whether the context saves by itself after changes (true for the main context, false for
    /// others, as in SwiftData).
    public var autosaveEnabled: Bool {
        get { autosave.isEnabled }
        set { autosave.isEnabled = newValue }
    }
    let autosave: Autosave
    static let logger = Logger(label: "ambar.swiftdata.context")

    /// A context of its own on `container`, on a private queue.
    public convenience init(_ container: ModelContainer) {
        self.init(container: container, main: false)
    }

    /// The main context is the stack's: the stack merges the container's other contexts' saves
    /// into it, and sharing the other processes'. Others are private-queue contexts of their own.
    convenience init(container: ModelContainer, main: Bool) {
        let managedContext =
            main ? container.stackMainContext : ManagedObjectContext(concurrencyType: .privateQueue, coordinator: container.coordinator, name: "ModelContext")
        // As in SwiftData: an inserted model whose unique attribute matches a stored one updates it.
        managedContext.mergePolicy = .mergeByPropertyObjectTrump
        managedContext.saveRefusal = container.saveRefusal
        self.init(container: container, wrapping: managedContext, autosaves: main)
    }

    /// A context over `managedContext` as it is (its queue, policy and refusals): for the
    /// handler of a durable consumer, whose context is the consumer's.
    init(container: ModelContainer, wrapping managedContext: ManagedObjectContext, autosaves: Bool, keepsModels: Bool = true) {
        self.container = container
        self.managedContext = managedContext
        registry = ModelRegistry(keepsModels: keepsModels)
        link = ContextLink(container: container, managedContext: managedContext)
        autosave = Autosave(isEnabled: autosaves)
        let failures = self.failures
        failureObservation = managedContext.observeFailures { failure in failures.record(failure) }
        autosave.context = self
        link.connect(self)
        let link = self.link
        changeObservation = managedContext.observeObjectsDidChange { change in link.context?.tellObservers(change.refreshed) }
    }

    deinit {
        // The context kept its models (each managed object holds its model); now those who use
        // them keep them. On the Ambar context's queue, where its objects are touched.
        guard registry.keepsModels else { return }
        let link = self.link
        let managedContext = self.managedContext
        managedContext.enqueue {
            for object in managedContext.registeredObjects {
                guard let model = object.companion as? any PersistentModel, model.persistentBackingData.isLinked(to: link) else { continue }
                object.companion = nil
            }
        }
    }

    /// The author recorded with the context's saves (SwiftData's `author`), seen in the history
    /// of every process.
    public var author: String? {
        get { managedContext.transactionAuthor }
        set { managedContext.transactionAuthor = newValue }
    }

    // MARK: - Queue

    /// Runs `body` on the context's queue (at once when the caller is on it).
    func onQueue<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        // On the queue already (a model actor's work, a perform block): run it as it is; its
        // changes are announced when the queue's current block ends, as for any edit there.
        if managedContext.isOnQueue { return try body() }
        return try managedContext.performAndWait(body)
    }

    /// Records `error` from reading `name` of `object`: logged, and thrown by the next save.
    func report(_ error: any Error, reading name: String, of object: ManagedObject) {
        failures.record("read '\(name)' of \(object.entityName)", error)
    }

    /// Records `error` from writing `name` of `object`: logged, and thrown by the next save.
    func report(_ error: any Error, writing name: String, of object: ManagedObject) {
        failures.record("write '\(name)' of \(object.entityName)", error)
    }

    // MARK: - Models and managed objects

    /// The model that stands for `object` in this context: the one registered, or one made
    /// for it (its values that have no placeholder read at once).
    func model<D: PersistentModel>(for object: ManagedObject, as type: D.Type) throws -> D {
        if let known = registry.model(for: object, as: D.self) { return known }
        let model = try anyModel(for: object)
        guard let typed = model as? D else {
            throw SwiftDataError.typeMismatch(property: object.entityName, expected: "\(D.self)", got: "\(Swift.type(of: model))")
        }
        return typed
    }

    /// The model that stands for `object` in this context (on the context's queue).
    func anyModel(for object: ManagedObject) throws -> any PersistentModel {
        if let known = registry.model(for: object) { return known }
        guard let entity = container.schema.accessByEntity[object.entityName] else {
            throw SwiftDataError(.modelNotInSchema, "entity \(object.entityName) has no model class in \(container.schema)")
        }
        return try makeModel(for: object, entity)
    }

    /// A new model of `entity`'s class for `object`, registered (on the context's queue).
    func makeModel(for object: ManagedObject, _ entity: Schema.EntityAccess) throws -> any PersistentModel {
        let model = entity.type.init(backingData: try makeBacking(for: object, entity))
        registry.register(model, for: object)
        return model
    }

    /// A new model of class `D` (`entity`'s) for `object`, registered (on the context's queue).
    private func makeModel<D: PersistentModel>(for object: ManagedObject, _ entity: Schema.EntityAccess, as type: D.Type) throws -> D {
        let model = D(backingData: try makeBacking(for: object, entity))
        registry.register(model, for: object)
        return model
    }

    /// The backing data of a model for `object`, with the values that have no placeholder read.
    private func makeBacking(for object: ManagedObject, _ entity: Schema.EntityAccess) throws -> _ModelBacking {
        let backing = _ModelBacking(object: object, link: link)
        for property in entity.materialized {
            guard let materialize = property.materialize else { continue }
            backing.remember(try materialize(object, self), for: property.name)
        }
        return backing
    }

    /// The models of `objects`, all of class `D` (a fetch's), looking the class up once.
    func models<D: PersistentModel>(for objects: [ManagedObject], as type: D.Type) throws -> [D] {
        let name = D.entityName
        let entity = container.schema.accessByEntity[name].flatMap { $0.type == D.self ? $0 : nil }
        var models: [D] = []
        models.reserveCapacity(objects.count)
        for object in objects {
            if let known = registry.model(for: object, as: D.self) {
                models.append(known)
            } else if let entity, object.entityName == name {
                models.append(try makeModel(for: object, entity, as: D.self))
            } else {
                models.append(try model(for: object, as: D.self))
            }
        }
        return models
    }

    /// The managed object `model` stands for in this context, inserting the model (and the
    /// models its values lead to) when it was not inserted yet (on the context's queue).
    func managedObject(inserting model: some PersistentModel) throws -> ManagedObject {
        if let (object, context) = model.persistentBackingData.attachment {
            guard context === self else {
                throw SwiftDataError(
                    .modelInAnotherContext,
                    "a \(type(of: model)) of another context was related to a model of this one; fetch it here (model(for: its persistentModelID))")
            }
            return object
        }
        let type = Swift.type(of: model)
        guard let entity = container.schema.access(of: type) else {
            throw SwiftDataError.modelNotInSchema(type, container.schema)
        }
        let backing = model.persistentBackingData
        let given = backing.takePending()
        let object: ManagedObject
        do {
            // The values of attribute types go in with the insert; if one does not fit, the
            // model is not inserted and keeps them.
            object = try managedContext.insertObject(
                entityName: entity.name, attributes: given.entries.compactMap { entry in entry.attribute.map { (entry.name, $0) } })
        } catch {
            backing.restorePending(given)
            throw error
        }
        registry.register(model, for: object)
        // Values given from another thread while the model was being inserted come last.
        let late = backing.attach(to: object, in: self)
        for entry in given.entries where entry.attribute == nil {
            try entity.propertiesByName[entry.name]?.writePending(entry.value, object, self)
        }
        for entry in late.entries {
            if let attribute = entry.attribute {
                try object.setValue(attribute, forKey: entry.name)
            } else {
                try entity.propertiesByName[entry.name]?.writePending(entry.value, object, self)
            }
        }
        for property in entity.constants where given[property.name] == nil {
            guard let value = property.readConstant?(model) else { continue }
            try property.writePending(value, object, self)
        }
        return object
    }

    /// Tells Observation that every persisted property of the models of `objects` changed: they
    /// were re-read from the store (a merge of another context's or process's save, a rollback).
    /// On the context's queue.
    private func tellObservers(_ objects: Set<ManagedObjectID>) {
        for id in objects {
            guard let object = managedContext.registeredObject(for: id), let model = registry.model(for: object) else { continue }
            for property in container.schema.accessByEntity[object.entityName]?.properties ?? [] { model._$observedValueChanged(property.name) }
        }
    }

    // MARK: - Inserting and deleting

    /// Inserts `model`, and the models its relationships lead to that are not inserted yet. The
    /// next save stores them.
    ///
    /// Inserting a model of a class that is not in the container's schema, or one of another
    /// context, is reported: the next ``save()`` throws it.
    public func insert<T: PersistentModel>(_ model: T) {
        do {
            _ = try onQueue { try managedObject(inserting: model) }
            autosave.changed()
        } catch {
            failures.record("insert a \(T.self)", error)
        }
    }

    /// Deletes `model` (and, by their delete rules, what its relationships lead to) at the next
    /// save; until then ``PersistentModel/isDeleted`` is true.
    public func delete<T: PersistentModel>(_ model: T) {
        guard let object = model.persistentBackingData.managedObject else { return }
        do {
            try onQueue { () throws in try managedContext.delete(object) }
            autosave.changed()
        } catch {
            failures.record("delete a \(T.self)", error)
        }
    }

    /// Deletes every model of `model` that `predicate` matches (every one when it is `nil`), at
    /// the next save.
    ///
    /// - Throws: ``SwiftDataError`` when the predicate has no equivalent in a store query or the
    ///   fetch fails.
    public func delete<T: PersistentModel>(model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true) throws {
        let request = try FetchDescriptor<T>(predicate: predicate).request()
        try onQueue { () throws in
            for object in try managedContext.fetch(request) { try managedContext.delete(object) }
        }
        autosave.changed()
    }

    /// Deletes every stored model of `type` (for ``ModelContainer/deleteAllData()``).
    func deleteAll(_ type: any PersistentModel.Type) throws {
        let request = FetchRequest<ManagedObject>(entityName: type.entityName)
        try onQueue { () throws in
            for object in try managedContext.fetch(request) { try managedContext.delete(object) }
        }
    }

    // MARK: - Saving

    /// Whether the context has changes it has not saved.
    public var hasChanges: Bool { onQueue { managedContext.hasChanges } }

    /// Saves the context's changes to the store; other contexts, and other processes sharing the
    /// store, see them. Posts ``willSave`` before and ``didSave`` after.
    ///
    /// - Throws: ``SwiftDataError`` (``SwiftDataError/Code/saveFailed``, with the store's error
    ///   as its cause) when the save is refused — a validation, a constraint, a configuration
    ///   that does not allow saving — or a failure reported since the last save (a property that
    ///   could not be written, a model that could not be inserted). Nothing is saved then.
    public func save() throws {
        if let failure = failures.takeFirst() {
            throw SwiftDataError(.saveFailed, "a change since the last save failed (\(failure.what)); nothing was saved", cause: failure.error)
        }
        NotificationCenter.default.post(name: Self.willSave, object: self)
        let saved: DidSaveNotification? = try onQueue { () throws -> DidSaveNotification? in
            guard managedContext.hasChanges else { return nil }
            // The models of the deleted objects, taken before the save lets the objects go.
            let deleted = managedContext.deletedObjects.compactMap { registry.model(for: $0) }
            let savedNotification = Locked<DidSaveNotification?>(nil)
            let observation = managedContext.observeDidSave { note in savedNotification.withLock { $0 = note } }
            defer { observation.cancel() }
            do {
                try managedContext.save()
            } catch {
                throw SwiftDataError(.saveFailed, "the context's changes could not be saved", cause: error)
            }
            for model in deleted { model.persistentBackingData.detach(keeping: .none) }
            return savedNotification.withLock { $0 }
        }
        guard let saved else { return }
        NotificationCenter.default.post(
            name: Self.didSave, object: self,
            userInfo: [
                NotificationKey.insertedIdentifiers.rawValue: saved.inserted.map(PersistentIdentifier.init),
                NotificationKey.updatedIdentifiers.rawValue: saved.updated.map(PersistentIdentifier.init),
                NotificationKey.deletedIdentifiers.rawValue: saved.deleted.map(PersistentIdentifier.init),
            ])
    }

    /// Runs `block`, then saves (SwiftData's `transaction(block:)`).
    ///
    /// - Throws: what `block` throws (nothing is saved then), or what ``save()`` throws.
    public func transaction(block: () throws -> Void) throws {
        try block()
        try save()
    }

    /// Discards the changes made since the last save: inserted models leave the context,
    /// changed and deleted ones get their stored values back.
    public func rollback() {
        do {
            try onQueue { () throws in
                let inserted = managedContext.insertedObjects.compactMap { registry.model(for: $0) }
                try managedContext.rollback()
                for model in inserted { model.persistentBackingData.detach(keeping: .none) }
            }
            _ = failures.takeFirst()
        } catch {
            failures.record("roll back", error)
        }
    }

    /// Posts the changes made so far to observers (as a save would, without saving).
    public func processPendingChanges() {
        onQueue { managedContext.processPendingChanges() }
    }

    // MARK: - Registered models

    /// The models inserted and not saved yet.
    public var insertedModelsArray: [any PersistentModel] { models(for: { $0.insertedObjects }) }
    /// The models changed and not saved yet.
    public var changedModelsArray: [any PersistentModel] { models(for: { $0.updatedObjects }) }
    /// The models deleted and not saved yet.
    public var deletedModelsArray: [any PersistentModel] { models(for: { $0.deletedObjects }) }

    private func models(for objects: (ManagedObjectContext) -> Set<ManagedObject>) -> [any PersistentModel] {
        onQueue {
            objects(managedContext).compactMap { object in
                do {
                    return try anyModel(for: object)
                } catch {
                    failures.record("make the model of \(object.objectID)", error)
                    return nil
                }
            }
        }
    }

    /// The model with identifier `persistentModelID` in this context, when the context has it
    /// already (nothing is fetched).
    public func registeredModel<T: PersistentModel>(for persistentModelID: PersistentIdentifier) -> T? {
        guard let id = persistentModelID.objectID else { return nil }
        return onQueue { managedContext.registeredObject(for: id).flatMap { registry.model(for: $0) as? T } }
    }

    // MARK: - Identity

    /// Contexts are equal when they are the same context.
    public static func == (lhs: ModelContext, rhs: ModelContext) -> Bool { lhs === rhs }

    /// Hashes the context's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
