import Foundation

/// A parent's unsaved changes relevant to a child's fetch.
struct PendingOverlay: Sendable {
    /// Objects with unsaved changes that match, with their current state.
    var matching: [ManagedObjectID: ObjectState] = [:]
    /// Objects that do not match any more (updated away, or deleted).
    var excluded: Set<ManagedObjectID> = []
    var isEmpty: Bool { matching.isEmpty && excluded.isEmpty }
}

extension ManagedObjectContext {
    /// Fetches the objects `request` describes.
    ///
    /// With `includesPendingChanges` (the default) the result reflects the unsaved inserts,
    /// updates and deletes of this context and of its parents: predicates are evaluated in memory
    /// on changed objects with the same semantics as in SQL.
    ///
    /// ```swift
    /// let open = try context.fetch(try FetchRequest<TaskItem>(
    ///     predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.priority)]))
    /// let named = try context.fetch(FetchRequest<ManagedObject>(
    ///     entityName: "Task", predicate: try ObjectPredicate(format: "title BEGINSWITH %@", "Paint")))
    /// ```
    ///
    /// - Throws: ``AmbarError/wrongQueue(context:operation:)``, ``AmbarError/unknownEntity(_:)``,
    ///   ``AmbarError/invalidPredicate(_:)``, ``AmbarError/storage(operation:code:message:cause:)``.
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>) throws(AmbarError) -> [T] {
        try checkQueue("fetch")
        return try Self.typed(try resolvedObjects(request), as: T.self)
    }

    /// `objects` as an array of `T`, the same array when every object is a `T`.
    ///
    /// Objects of one entity share a class, so each class is checked once (as the run of objects
    /// meets it), not each object: a cast per object, and a second array of them, were a
    /// twentieth of a large fetch.
    ///
    /// - Throws: ``AmbarError/invalidFetchRequest(_:)`` naming the first object that is not a `T`.
    static func typed<T: ManagedObject>(_ objects: [ManagedObject], as _: T.Type) throws(AmbarError) -> [T] {
        var checked: ObjectIdentifier?
        for object in objects {
            let objectClass = ObjectIdentifier(type(of: object))
            if objectClass == checked { continue }
            guard object is T else {
                throw .invalidFetchRequest("\(object.entityName) objects are \(type(of: object)), not \(T.self)")
            }
            checked = objectClass
        }
        // Every element is a `T` (checked above), and an array of class references has the same
        // representation whatever its element class: the array is reused, not copied.
        return unsafeBitCast(objects, to: [T].self)
    }

    /// The IDs of the objects `request` describes.
    public func fetchObjectIDs<T: ManagedObject>(_ request: FetchRequest<T>) throws(AmbarError) -> [ManagedObjectID] {
        try checkQueue("fetchObjectIDs")
        if try !hasRelevantPendingChanges(request) {
            try persistentStoreCoordinator.checkUsable()
            return try persistentStoreCoordinator.store.fetchIDs(request.storeQuery)
        }
        var faults = request
        faults.fetchBatchSize = max(request.fetchBatchSize, 1)
        return try resolvedObjects(faults).map(\.objectID)
    }

    /// The number of objects `request` describes (limit and offset apply).
    public func count<T: ManagedObject>(for request: FetchRequest<T>) throws(AmbarError) -> Int {
        try checkQueue("count")
        if try !hasRelevantPendingChanges(request) {
            try persistentStoreCoordinator.checkUsable()
            var query = request.storeQuery
            query.sortDescriptors = []
            return try persistentStoreCoordinator.store.count(query)
        }
        return try fetchObjectIDs(request).count
    }

    /// The values of `properties` for each matching object, as dictionaries; with `distinct`, each
    /// combination once. Reads the store only: unsaved changes are not included.
    public func fetchValues<T: ManagedObject>(_ request: FetchRequest<T>, properties: [String], distinct: Bool = false) throws(AmbarError) -> [[String:
        AttributeValue]]
    {
        try checkQueue("fetchValues")
        try persistentStoreCoordinator.checkUsable()
        return try persistentStoreCoordinator.store.fetchValues(request.storeQuery, properties: properties, distinct: distinct)
    }

    /// The IDs of the objects each request selects, read from the store alone in one read with
    /// the token of the ledger's head: exactly the objects that matched after every transaction up
    /// to that token, so that following the ledger after it misses nothing and repeats nothing.
    /// Only each request's entity and predicate apply (no sort, limit or batches); unsaved changes
    /// are not included. What `serve` starts a snapshot stream with: the IDs take little memory
    /// however many objects match, and their values are read in batches
    /// (``existingObjects(_:)``).
    ///
    /// - Throws: ``AmbarError/wrongQueue(context:operation:)``, ``AmbarError/unknownEntity(_:)``,
    ///   ``AmbarError/invalidPredicate(_:)``, ``AmbarError/storage(operation:code:message:cause:)``.
    package func fetchObjectIDsAtHistoryHead(_ requests: [FetchRequest<ManagedObject>]) throws(AmbarError) -> (ids: [[ManagedObjectID]], token: Int64) {
        try checkQueue("fetchObjectIDsAtHistoryHead")
        try persistentStoreCoordinator.checkUsable()
        let queries = requests.map { request -> StoreQuery in
            var query = request.storeQuery
            query.sortDescriptors = []
            query.limit = nil
            query.offset = 0
            return query
        }
        return try persistentStoreCoordinator.store.fetchIDsAtHistoryHead(queries)
    }

    /// The objects of `ids` that exist in the store, in their order, their values read in one read
    /// of the store (those this context already holds with values keep them: call it on a fresh
    /// context, `DataStack.temporaryContext()`). An ID whose object was deleted is left out.
    ///
    /// - Throws: ``AmbarError/wrongQueue(context:operation:)``,
    ///   ``AmbarError/storage(operation:code:message:cause:)``.
    package func existingObjects(_ ids: [ManagedObjectID]) throws(AmbarError) -> [ManagedObject] {
        try checkQueue("existingObjects")
        try persistentStoreCoordinator.checkUsable()
        let rows = try persistentStoreCoordinator.store.loadRows(ids.filter { !$0.isTemporaryID })
        var found: [ManagedObjectID: StoreRow] = [:]
        for row in rows { found[row.id] = row }
        var objects: [ManagedObject] = []
        objects.reserveCapacity(rows.count)
        for id in ids {
            guard let row = found[id], let object = registeredOrFault(for: row.id) else { continue }
            if !object.hasData {
                object.load(values: row.values, toOne: row.toOne, version: row.version)
                object.setFetched(asFault: false)
            }
            objects.append(object)
        }
        return objects
    }

    // MARK: - Implementation

    /// The rows of a fetch by object ID made while a merge with prefetched rows is announced,
    /// when those rows cover every ID and no ID is a registered fault (which could have been
    /// saved here since the rows were read); nil otherwise, and the store is read.
    private func prefetchedRows(for query: StoreQuery, layout: EntityLayout) -> [StoreRow]? {
        guard let prefetched = state.mergeRows, case .objectIn(let ids)? = query.predicate,
            query.sortDescriptors.isEmpty, query.limit == nil, query.offset == 0
        else { return nil }
        let entities = persistentStoreCoordinator.model.resolved.entities
        var rows: [StoreRow] = []
        rows.reserveCapacity(ids.count)
        for id in ids {
            guard let found = prefetched.lookup(id), state.registered[id].map({ $0.hasData }) ?? true else { return nil }
            guard let row = found, let rowLayout = entities[row.id.entityName],
                query.includesSubentities ? rowLayout.isKind(of: layout.name) : rowLayout === layout
            else { continue }
            rows.append(row)
        }
        return rows
    }

    private func isCandidate(_ object: ManagedObject, _ layout: EntityLayout, includesSubentities: Bool) -> Bool {
        includesSubentities ? object.layout.isKind(of: layout.name) : object.layout === layout
    }

    /// Whether this context or a parent has unsaved changes to objects of the request's entity.
    private func hasRelevantPendingChanges<T>(_ request: FetchRequest<T>) throws(AmbarError) -> Bool {
        guard request.includesPendingChanges else { return false }
        if parent != nil { return true }
        let layout = try persistentStoreCoordinator.model.resolved.layout(request.entityName)
        let sub = request.includesSubentities
        return state.inserted.values.contains { isCandidate($0, layout, includesSubentities: sub) }
            || state.deleted.values.contains { isCandidate($0, layout, includesSubentities: sub) }
            || state.updated.values.contains { $0.isUpdated && isCandidate($0, layout, includesSubentities: sub) }
    }

    func resolvedObjects<T>(_ request: FetchRequest<T>) throws(AmbarError) -> [ManagedObject] {
        try persistentStoreCoordinator.checkUsable()
        let layout = try persistentStoreCoordinator.model.resolved.layout(request.entityName)
        let overlay =
            request.includesPendingChanges && parent != nil
            ? try parentOverlay(layout, request.includesSubentities, request.predicate) : PendingOverlay()
        let pending = try hasRelevantPendingChanges(request)
        var query = request.storeQuery
        let windowInMemory = pending && (query.limit != nil || query.offset > 0)
        if windowInMemory {
            query.limit = nil
            query.offset = 0
        }
        let store = persistentStoreCoordinator.store
        var objects: [ManagedObject] = []
        if request.fetchBatchSize > 0 {
            let ids = try store.fetchIDs(query)
            let batch = FaultBatch(ids: ids, size: request.fetchBatchSize)
            objects.reserveCapacity(ids.count)
            for id in ids {
                guard let object = registeredOrFault(for: id) else { continue }
                if !object.hasData { object.joinFaultBatch(batch) }
                objects.append(object)
            }
        } else {
            let entities = persistentStoreCoordinator.model.resolved.entities
            let asFaults = request.returnsObjectsAsFaults
            // Rows mostly share one entity: its layout is looked up once, by the ID's scope.
            var last: (scope: UnsafeMutableRawPointer, layout: EntityLayout)?
            // A context with nothing registered (a fresh reader or importer) needs no lookup:
            // one fetch never reads the same row twice. Its objects are registered after the
            // rows are read, in a table sized once for all of them, from IDs kept aside with a
            // reference taken while each object was just made: the pass that registers them
            // then reads no object again (at 100,000 objects, going back to each one missed the
            // cache, and was a twentieth of the fetch).
            let nothingRegistered = state.registered.isEmpty
            var made: [(id: ManagedObjectID, object: Unmanaged<ManagedObject>)] = []
            // Builds (or fills) the object of one row; called as each row is read, while the
            // row's values are still in the cache. What it changes is passed in, not captured, so
            // that the closures below, which are not escaping, are checked for overlapping
            // access when compiled, not at every row.
            func add(
                _ row: consuming StoreRow, to objects: inout [ManagedObject], last: inout (scope: UnsafeMutableRawPointer, layout: EntityLayout)?,
                made: inout [(id: ManagedObjectID, object: Unmanaged<ManagedObject>)]
            ) {
                let id = row.id
                if !nothingRegistered, let existing = state.registered[id] {
                    if !existing.hasData {
                        existing.load(values: row.values, toOne: row.toOne, version: row.version)
                        existing.setFetched(asFault: asFaults)
                    }
                    objects.append(existing)
                    return
                }
                let layout: EntityLayout
                if let known = last, known.scope == id.scope.toOpaque() {
                    layout = known.layout
                } else {
                    guard let found = entities[id.entityName] else { return }
                    layout = found
                    last = (id.scope.toOpaque(), found)
                }
                let object = layout.objectClass.init(ManagedObjectInitToken(layout: layout, objectID: id, context: self, row: consume row))
                if nothingRegistered {
                    made.append((id, Unmanaged.passRetained(object)))
                } else {
                    state.registered[id] = object
                }
                object.setFetched(asFault: asFaults)
                objects.append(object)
            }
            if let prefetched = prefetchedRows(for: query, layout: layout) {
                objects.reserveCapacity(prefetched.count)
                for row in prefetched { add(row, to: &objects, last: &last, made: &made) }
            } else {
                do {
                    try store.forEachRow(query) { row in add(row, to: &objects, last: &last, made: &made) }
                } catch {
                    for entry in made { entry.object.release() }
                    throw error
                }
            }
            if nothingRegistered {
                state.registered.reserveCapacity(made.count)
                // Each registration takes over the reference taken when the object was made.
                for entry in made { state.registered[entry.id] = entry.object.takeRetainedValue() }
            }

        }
        guard pending else { return objects }

        // Overlay the parents' and this context's unsaved changes.
        var members = Set(objects.map(\.objectID))
        if !overlay.isEmpty {
            objects.removeAll { overlay.excluded.contains($0.objectID) }
            for (id, objectState) in overlay.matching.sorted(by: { PredicateEvaluation.idPrecedes($0.key, $1.key) }) {
                guard let object = registeredOrFault(for: id) else { continue }
                if !object.hasData || !object.hasChanges { object.apply(objectState) }
                if members.insert(id).inserted { objects.append(object) }
            }
        }
        var filtered: [ManagedObject] = []
        filtered.reserveCapacity(objects.count)
        for object in objects where object.lifecycle != .deleted && object.lifecycle != .invalidated {
            if object.isUpdated, let predicate = request.predicate, !(try PredicateEvaluation.evaluate(predicate, on: object)) {
                continue
            }
            filtered.append(object)
        }
        members = Set(filtered.map(\.objectID))
        let changed = Array(state.inserted.values) + state.updated.values.filter(\.isUpdated)
        for object in changed.sorted(by: { PredicateEvaluation.idPrecedes($0.objectID, $1.objectID) })
        where !members.contains(object.objectID) && isCandidate(object, layout, includesSubentities: request.includesSubentities) {
            if let predicate = request.predicate, !(try PredicateEvaluation.evaluate(predicate, on: object)) { continue }
            filtered.append(object)
            members.insert(object.objectID)
        }
        // Each object's sort values read once (a fault that cannot be loaded throws here).
        let sorts = request.sortDescriptors
        var keys: [PredicateEvaluation.SortKey] = []
        keys.reserveCapacity(filtered.count)
        for object in filtered { keys.append(try PredicateEvaluation.SortKey(object, sorts)) }
        filtered = keys.indices.sorted { PredicateEvaluation.precedes(keys[$0], keys[$1], sorts) }.map { filtered[$0] }
        if windowInMemory {
            let start = min(request.fetchOffset, filtered.count)
            let end = request.fetchLimit > 0 ? min(start + request.fetchLimit, filtered.count) : filtered.count
            filtered = Array(filtered[start..<end])
        }
        return filtered
    }

    private func parentOverlay(_ layout: EntityLayout, _ includesSubentities: Bool, _ predicate: ObjectPredicate?) throws(AmbarError) -> PendingOverlay {
        guard let parent else { return PendingOverlay() }
        let name = layout.name
        return try parent.performAndWait { () throws(AmbarError) -> PendingOverlay in
            try parent.pendingOverlay(entity: name, includesSubentities: includesSubentities, predicate: predicate)
        }
    }

    /// This context's (and its ancestors') unsaved changes relevant to a child's fetch. Runs on
    /// this context's queue.
    func pendingOverlay(entity: String, includesSubentities: Bool, predicate: ObjectPredicate?) throws(AmbarError) -> PendingOverlay {
        var overlay = PendingOverlay()
        if let parent {
            overlay = try parent.performAndWait { () throws(AmbarError) -> PendingOverlay in
                try parent.pendingOverlay(entity: entity, includesSubentities: includesSubentities, predicate: predicate)
            }
        }
        let layout = try persistentStoreCoordinator.model.resolved.layout(entity)
        for object in state.deleted.values where isCandidate(object, layout, includesSubentities: includesSubentities) {
            overlay.excluded.insert(object.objectID)
            overlay.matching.removeValue(forKey: object.objectID)
        }
        let changed = Array(state.inserted.values) + state.updated.values.filter(\.isUpdated)
        for object in changed where isCandidate(object, layout, includesSubentities: includesSubentities) {
            let matches = try predicate.map { p throws(AmbarError) in try PredicateEvaluation.evaluate(p, on: object) } ?? true
            if matches {
                overlay.matching[object.objectID] = ObjectState(object: object)
                overlay.excluded.remove(object.objectID)
            } else {
                overlay.excluded.insert(object.objectID)
                overlay.matching.removeValue(forKey: object.objectID)
            }
        }
        return overlay
    }
}
