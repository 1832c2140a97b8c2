import Foundation
import Tracing

/// A child's changes, moved into its parent at save.
struct ChildSavePayload: Sendable {
    var inserted: [ObjectState] = []
    var updated: [(state: ObjectState, attributes: [Int], relationships: [Int])] = []
    var deleted: [ManagedObjectID] = []
}

extension ManagedObjectContext {
    /// Saves the context's changes: to the store for a root context (one transaction, conflicts
    /// resolved by ``mergePolicy``), or into the parent for a child context.
    ///
    /// On failure nothing is written and the context keeps all its changes. A context without
    /// changes saves nothing.
    ///
    /// ```swift
    /// let importer = try stack.importerContext()
    /// try await importer.perform { () throws(AmbarError) in
    ///     let task = try importer.insert(TaskItem.self)
    ///     task.title = "Paint the fence"
    ///     try importer.save()            // one transaction, one ledger entry
    /// }
    /// ```
    ///
    /// - Throws: ``AmbarError/validation(object:property:reason:)``,
    ///   ``AmbarError/deleteDenied(object:relationship:)``, ``AmbarError/mergeConflict(_:)``,
    ///   ``AmbarError/constraintViolation(entity:attributes:values:existing:)``,
    ///   ``AmbarError/saveRefused(context:reason:)``, ``AmbarError/storeDeleted``,
    ///   ``AmbarError/wrongQueue(context:operation:)``, ``AmbarError/storage(operation:code:message:cause:)``.
    public func save() throws(AmbarError) {
        try checkQueue("save")
        try checkMayWrite()
        if let consumer, state.consumerMove == nil {
            throw .saveRefused(
                context: displayName,
                reason:
                    "this context belongs to consumer '\(consumer)', which saves it with its position when your handler returns; make your changes and return"
            )
        }
        if !state.outbox.isEmpty && state.consumerMove == nil {
            throw .saveRefused(
                context: displayName,
                reason:
                    "it holds \(state.outbox.count) outbox message(s), which are written with a consumer's position move: save with save(movingConsumer:from:to:) (a ChangeConsumer does), or rollback() to drop them"
            )
        }
        processPendingChanges()
        guard hasChanges else { return }
        try persistentStoreCoordinator.checkUsable()
        if parent == nil { try computeDerivedAttributes(Array(state.inserted.values) + state.updated.values.filter { $0.isUpdated && $0.hasStoredChanges }) }
        try validateForSave()
        if parent != nil {
            try saveIntoParent()
        } else {
            try saveToStore()
        }
    }

    /// Saves the changes to the store at most once for `idempotencyKey`: the key is recorded in
    /// the same transaction, and a later save with the same key — from any process, after any
    /// crash — writes nothing and throws ``AmbarError/alreadySaved(idempotencyKey:token:)``.
    ///
    /// Use it for work that must apply exactly once, such as importing a file that may be seen
    /// again after a crash (check ``PersistentStoreCoordinator/savedToken(forIdempotencyKey:)``
    /// first to skip the work). Only a root context's save reaches the store; a child context
    /// refuses. A save without changes records nothing.
    public func save(idempotencyKey: String) throws(AmbarError) {
        try checkQueue("save")
        guard parent == nil else {
            throw .saveRefused(
                context: displayName, reason: "an idempotency key applies to a save that reaches the store; save a root context (e.g. an importer context)")
        }
        state.idempotencyKey = idempotencyKey
        defer { state.idempotencyKey = nil }
        try save()
    }

    /// Saves the changes and moves durable consumer `consumer`'s ledger position from `expected`
    /// (`nil`: not recorded yet) to `token`, in one store transaction: the changes and the new
    /// position commit together or not at all.
    ///
    /// This is what makes a consumer's effects in the store happen exactly once: whatever kills
    /// the process, either both the effects of the transactions through `token` and the position
    /// after them are in the store, or neither is and they are processed again. The position
    /// moves only if it is still `expected`, so a second process running the same consumer cannot
    /// apply the same transactions twice: its save throws
    /// ``AmbarError/consumerPositionMoved(consumer:expected:found:)`` and writes nothing. A
    /// context without changes moves the position alone.
    ///
    /// `ChangeConsumer` (SharedStoreIPC) does all of this for you; this is the building block
    /// for a consumer written by hand:
    ///
    /// ```swift
    /// let position = try coordinator.historyCursor(consumer: "alerter")?.token
    /// let page = try coordinator.history(after: position ?? 0, limit: 100)
    /// guard let last = page.last else { return }
    /// try context.performAndWait { () throws(AmbarError) in
    ///     for transaction in page { try makeAlerts(for: transaction, in: context) }
    ///     try context.save(movingConsumer: "alerter", from: position, to: last.token)
    /// }
    /// ```
    ///
    /// Only a root context's save reaches the store; a child context refuses.
    ///
    /// - Throws: ``AmbarError/consumerPositionMoved(consumer:expected:found:)`` (roll back and read
    ///   the position again), and whatever ``save()`` throws. On failure nothing is written and the
    ///   context keeps its changes.
    public func save(movingConsumer consumer: String, from expected: Int64?, to token: Int64) throws(AmbarError) {
        try save(ConsumerMove(consumer: consumer, expected: expected, token: token))
    }

    /// Saves like ``save(movingConsumer:from:to:)``, only while `ownership` (from
    /// ``PersistentStoreCoordinator/claimConsumer(_:owner:lease:)``) is still the consumer's:
    /// a copy whose lease lapsed and was taken over writes nothing.
    ///
    /// - Throws: ``AmbarError/consumerLeaseLost(consumer:holder:)`` when another process owns
    ///   the consumer now (nothing is written; stop delivering), and what
    ///   ``save(movingConsumer:from:to:)`` throws.
    public func save(movingConsumer consumer: String, from expected: Int64?, to token: Int64, fencedBy ownership: ConsumerOwnership) throws(AmbarError) {
        try save(try ConsumerMove(consumer: consumer, expected: expected, token: token, fencedBy: ownership))
    }

    /// Saves the context's changes with `move`, or moves the position alone when there are none.
    private func save(_ move: ConsumerMove) throws(AmbarError) {
        let consumer = move.consumer
        try checkQueue("save")
        guard parent == nil else {
            throw .saveRefused(context: displayName, reason: "a consumer's position moves with a save that reaches the store; save a root context")
        }
        if let owner = self.consumer, owner != consumer {
            throw .saveRefused(context: displayName, reason: "this context belongs to consumer '\(owner)', not '\(consumer)'")
        }
        var move = move
        move.outbox = state.outbox
        state.consumerMove = move
        defer { state.consumerMove = nil }
        processPendingChanges()
        if hasChanges {
            try save()
        } else {
            try persistentStoreCoordinator.move(move)
        }
        state.outbox.removeAll()
    }

    /// Gives inserted objects permanent IDs now, before they are saved.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws(AmbarError) {
        try checkQueue("obtainPermanentIDs")
        try persistentStoreCoordinator.checkUsable()
        var byEntity: [String: [ManagedObject]] = [:]
        for object in objects where object.objectID.isTemporaryID {
            guard object.managedObjectContext === self else {
                throw .foreignObject(object.objectID, operation: "obtainPermanentIDs")
            }
            byEntity[object.entityName, default: []].append(object)
        }
        let store = persistentStoreCoordinator.store
        var map: [ManagedObjectID: ManagedObjectID] = [:]
        for (entity, list) in byEntity {
            let keys = try store.allocatePrimaryKeys(entity: entity, count: list.count)
            let scope = ObjectIDScope.interned(entityName: entity, storeIdentifier: store.identifier)
            for (object, pk) in zip(list, keys) {
                let id = ManagedObjectID(scope: scope, primaryKey: pk)
                map[object.objectID] = id
                state.pendingInserted.remove(object.objectID)
                reregister(object, as: id)
                state.pendingInserted.insert(id)
            }
        }
        remapIDs(map, in: Array(state.inserted.values) + Array(state.updated.values) + Array(state.deleted.values))
    }

    /// Replaces IDs that changed (temporary to permanent) in the relationships of `objects`.
    /// Only objects with unsaved changes can point at an object that was just inserted.
    func remapIDs(_ map: [ManagedObjectID: ManagedObjectID], in objects: [ManagedObject]) {
        guard !map.isEmpty else { return }
        for object in objects where !object.layout.relationships.isEmpty { object.replaceIDs(map) }
    }

    // MARK: - Validation

    private func validateForSave() throws(AmbarError) {
        for object in state.deleted.values {
            for relationship in object.layout.relationships where relationship.description.deleteRule == .deny {
                let hasDestinations =
                    relationship.isToMany
                    ? try !requireToMany(object, relationship.index).filter { state.registered[$0]?.lifecycle != .deleted }.isEmpty
                    : object.toOne[relationship.index].map { state.registered[$0]?.lifecycle != .deleted } ?? false
                if hasDestinations { throw .deleteDenied(object: object.objectID, relationship: relationship.name) }
            }
        }
        for object in state.inserted.values { try validate(object) }
        for object in state.updated.values where object.isUpdated { try validate(object) }
    }

    /// Checks `object` against its model's rules. Walks the layout's lists of the properties
    /// that have rules, not every property: copying each property's description cost more than
    /// the checks in an import.
    private func validate(_ object: ManagedObject) throws(AmbarError) {
        let layout = object.layout
        for i in layout.requiredAttributes where object.values[i].isNull {
            throw .validation(object: object.objectID, property: layout.attributes[i].name, reason: "a value is required (the attribute is not optional)")
        }
        for i in layout.validatedAttributes {
            if let reason = layout.attributes[i].validation.violation(of: object.values[i], type: layout.attributes[i].type) {
                throw .validation(object: object.objectID, property: layout.attributes[i].name, reason: reason)
            }
        }
        for i in layout.countedToMany {
            let count = try requireToMany(object, i).filter { state.registered[$0]?.lifecycle != .deleted }.count
            let (low, high) = (layout.relationships[i].description.minCount, layout.relationships[i].description.maxCount)
            if count < low || (high > 0 && count > high) {
                let limits = high > 0 ? "\(low)…\(high)" : "at least \(low)"
                throw .validation(
                    object: object.objectID, property: layout.relationships[i].name, reason: "it holds \(count) objects; the model allows \(limits)")
            }
        }
        for i in layout.requiredToOne {
            let target = object.toOne[i]
            if target == nil || state.registered[target!]?.lifecycle == .deleted {
                throw .validation(
                    object: object.objectID, property: layout.relationships[i].name, reason: "a destination is required (the relationship is not optional)")
            }
        }
    }

    // MARK: - Root save

    /// The new order of each ordered relationship of `object` whose order or members changed.
    private func orderChanges(_ object: ManagedObject) -> [OrderChange] {
        var changes: [OrderChange] = []
        for i in object.changedRelationships.sorted() where object.layout.relationships[i].isOrdered {
            guard let list = object.order[i], list != object.snapshotOrder[i] || object.lifecycle == .inserted else { continue }
            changes.append(OrderChange(owner: object.objectID, relationship: object.layout.relationships[i].name, destinations: list))
        }
        return changes
    }

    private func joinChanges(_ object: ManagedObject) -> [JoinChange] {
        var changes: [JoinChange] = []
        for i in object.changedRelationships.sorted() {
            let relationship = object.layout.relationships[i]
            guard case .joinTable = relationship.mapping, let current = object.toMany[i] else { continue }
            let before = object.snapshotToMany[i] ?? []
            for added in current.subtracting(before) {
                changes.append(JoinChange(owner: object.objectID, relationship: relationship.name, destination: added, isInsert: true))
            }
            for removed in before.subtracting(current) {
                changes.append(JoinChange(owner: object.objectID, relationship: relationship.name, destination: removed, isInsert: false))
            }
        }
        return changes
    }

    private func saveToStore() throws(AmbarError) {
        // Usually in insertion order already, which is the order of their temporary IDs.
        let inserted = ObjectIDOrder.sorted(state.insertedObjects)
        // Objects whose only changes are transient have nothing to write: their changes are
        // committed in memory below, without a row version or a ledger entry.
        let changedInMemory = state.updated.values.filter(\.isUpdated)
        let transientOnly = changedInMemory.filter { !$0.hasStoredChanges }
        let updated = ObjectIDOrder.sorted(changedInMemory.lazy.filter(\.hasStoredChanges))
        let deleted = ObjectIDOrder.sorted(state.deleted.values)
        var changes = ChangeSet()
        changes.mergePolicy = mergePolicy
        changes.author = transactionAuthor
        changes.contextName = name
        changes.idempotencyKey = state.idempotencyKey
        changes.consumerMove = state.consumerMove
        changes.inserts.reserveCapacity(inserted.count)
        for object in inserted {
            changes.inserts.append(InsertChange(id: object.objectID, values: object.values, toOne: object.toOne))
            changes.joins += joinChanges(object)
            changes.orders += orderChanges(object)
        }
        var shapes = UpdateShapes()
        changes.updates.reserveCapacity(updated.count)
        for object in updated {
            let shape = shapes.shape(of: object)
            changes.updates.append(
                UpdateChange(
                    id: object.objectID, ledgerProperties: shape.ledgerProperties, expectedVersion: object.version, snapshot: object.snapshot,
                    values: object.values, changedAttributes: shape.attributes,
                    snapshotToOne: object.snapshotToOne, toOne: object.toOne, changedToOne: shape.toOne))
            changes.joins += joinChanges(object)
            changes.orders += orderChanges(object)
        }
        for object in deleted where !object.objectID.isTemporaryID {
            changes.deletes.append(DeleteChange(id: object.objectID, expectedVersion: object.version))
        }
        let started = ContinuousClock.now
        let span = startSpanIfTracing("ambar.save")
        defer { span?.end() }
        span?.attributes["ambar.inserted"] = changes.inserts.count
        span?.attributes["ambar.updated"] = changes.updates.count
        span?.attributes["ambar.deleted"] = changes.deletes.count
        let outcome: SaveOutcome
        do {
            outcome = try persistentStoreCoordinator.store.save(changes)
        } catch {
            StoreMetrics.saveFailures.increment()
            span?.recordError(error)
            span?.setStatus(SpanStatus(code: .error))
            throw error
        }
        if let token = outcome.token { span?.attributes["ambar.token"] = token }
        recordSavedToken(outcome.token)
        StoreMetrics.saved(objects: changes.inserts.count + changes.updates.count + changes.deletes.count, duration: ContinuousClock.now - started)
        for object in transientOnly {
            object.commit(version: object.version)
            state.forgetUpdate(ObjectIdentifier(object))
        }
        apply(outcome, inserted: inserted, updated: updated, deleted: deleted)
        if !outcome.deletedByRule.isEmpty || !outcome.nullifiedByRule.isEmpty {
            // Rows the store reached by delete rules that this context had not read (linked by
            // another save since): its registered objects for them follow, as after a merge.
            _ = mergeOnQueue(DidSaveNotification(inserted: [], updated: outcome.nullifiedByRule, deleted: outcome.deletedByRule, token: outcome.token))
        }
        let note = DidSaveNotification(
            context: identifier, contextName: name, author: transactionAuthor,
            coordinator: persistentStoreCoordinator.identifier, parent: nil,
            inserted: outcome.inserted, updated: outcome.updated, deleted: outcome.deleted, token: outcome.token)
        didSaveObservers.post(note)
        persistentStoreCoordinator.didSaveObservers.post(note)
    }

    private func apply(_ outcome: SaveOutcome, inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) {
        var refreshed = Set<ManagedObjectID>()
        var invalidated = Set<ManagedObjectID>()
        for objects in [inserted, updated, deleted] { remapIDs(outcome.permanentIDs, in: objects) }
        // Most saves refresh nothing: skip hashing every inserted object's ID to find out.
        let anyRefreshed = !outcome.refreshed.isEmpty
        // The store lists the inserts' IDs in the order the change set gave them, which is
        // `inserted`'s; a store that does not is asked by ID.
        let inStep = outcome.insertedIDs.count == inserted.count
        for (i, object) in inserted.enumerated() {
            if inStep {
                reregister(object, as: outcome.insertedIDs[i])  // nothing to do when it kept its ID
            } else if let permanent = outcome.permanentIDs[object.objectID] {
                reregister(object, as: permanent)
            }
            object.markRegistered()
            if anyRefreshed, let row = outcome.refreshed[object.objectID] {
                object.load(values: row.values, toOne: row.toOne, version: row.version)
                object.dropLoadedToMany()
                refreshed.insert(object.objectID)
            } else {
                object.commit(version: outcome.versions.isEmpty ? 1 : outcome.versions[object.objectID] ?? 1)
            }
        }
        for object in updated {
            if outcome.vanished.contains(object.objectID) {
                invalidated.insert(object.objectID)
                invalidate(object)
            } else if let row = outcome.refreshed[object.objectID] {
                object.load(values: row.values, toOne: row.toOne, version: row.version)
                object.dropLoadedToMany()
                refreshed.insert(object.objectID)
            } else {
                object.commit(version: outcome.versions[object.objectID] ?? object.version + 1)
            }
        }
        for object in deleted {
            if outcome.discardedDeletes.contains(object.objectID), let row = outcome.refreshed[object.objectID] {
                object.markRegistered()
                object.load(values: row.values, toOne: row.toOne, version: row.version)
                refreshed.insert(object.objectID)
            } else {
                invalidate(object)
            }
        }
        state.clearChanges()
        if !refreshed.isEmpty || !invalidated.isEmpty {
            postObjectsDidChange(
                ObjectsDidChangeNotification(
                    context: identifier, inserted: [], updated: refreshed, deleted: invalidated,
                    refreshed: refreshed, invalidated: invalidated, invalidatedAll: false))
        }
    }

    // MARK: - Child save

    private func saveIntoParent() throws(AmbarError) {
        guard let parent else { return }
        // Permanent IDs first, so parent and child agree on every object's identity.
        try obtainPermanentIDs(for: Array(state.inserted.values))
        var payload = ChildSavePayload()
        let inserted = Array(state.inserted.values)
        let updated = state.updated.values.filter(\.isUpdated)
        let deleted = Array(state.deleted.values)
        for object in inserted {
            object.loadEmptyToMany()
            payload.inserted.append(ObjectState(object: object))
        }
        for object in updated {
            payload.updated.append((ObjectState(object: object), object.changedAttributes.sorted(), object.changedRelationships.sorted()))
        }
        payload.deleted = deleted.map(\.objectID)
        let sent = payload
        try parent.performAndWait { () throws(AmbarError) in try parent.absorb(sent) }
        for object in inserted {
            object.markRegistered()
            object.commit(version: object.version)
        }
        for object in updated { object.commit(version: object.version) }
        for object in deleted { invalidate(object) }
        state.clearInserted()
        state.forgetAllUpdates()
        state.deleted.removeAll()
        let note = DidSaveNotification(
            context: identifier, contextName: name, author: transactionAuthor,
            coordinator: persistentStoreCoordinator.identifier, parent: parent.identifier,
            inserted: Set(inserted.map(\.objectID)), updated: Set(updated.map(\.objectID)), deleted: Set(payload.deleted))
        didSaveObservers.post(note)
        parent.childDidSaveObservers.post(note)
    }

    /// Takes a child's saved changes as this context's own unsaved changes. Runs on this queue.
    func absorb(_ payload: ChildSavePayload) throws(AmbarError) {
        for incoming in payload.inserted {
            guard let object = registeredOrFault(for: incoming.id) else { continue }
            object.becomeInserted(from: incoming)
            state.addInserted(object)
            state.pendingInserted.insert(object.objectID)
        }
        for (incoming, attributes, relationships) in payload.updated {
            guard let object = registeredOrFault(for: incoming.id) else { continue }
            try object.fireFaultOrThrow()
            // A to-many relationship the child replaced is loaded here first, so its committed
            // set is the store's.
            for i in relationships where i < object.toOne.count && object.layout.relationships[i].isToMany {
                if (incoming.toMany[safe: i] ?? nil) != nil && object.toMany[i] == nil { _ = try requireToMany(object, i) }
            }
            object.takeChanges(from: incoming, attributes: attributes, relationships: relationships)
            objectDidChange(object)
        }
        for id in payload.deleted {
            guard let object = registeredOrFault(for: id) else { continue }
            let key = ObjectIdentifier(object)
            if object.lifecycle == .inserted {
                state.removeInserted(key)
                invalidate(object)
                continue
            }
            try object.fireFaultOrThrow()
            state.forgetUpdate(key)
            object.markDeleted()
            state.deleted[key] = object
            state.pendingDeleted.insert(id)
        }
        processPendingChanges()
    }
}

extension ManagedObjectContext {
    /// Throws ``AmbarError/saveRefused(context:reason:)`` for a context that never writes (a
    /// temporary context, a read-only main context): its saves and its batch operations alike.
    func checkMayWrite() throws(AmbarError) {
        if let reason = saveRefusal { throw .saveRefused(context: displayName, reason: reason) }
    }
}
