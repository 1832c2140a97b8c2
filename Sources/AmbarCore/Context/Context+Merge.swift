import Foundation

extension ManagedObjectContext {
    /// Merges a save made elsewhere (another context, or another process) into this context, with
    /// Core Data's semantics:
    ///
    /// - registered objects that were updated are re-read; unsaved local edits are kept (under
    ///   ``MergePolicy/mergeByPropertyStoreTrump``, an edit to a property that the save also changed
    ///   yields to the saved value);
    /// - registered objects that were deleted leave the context;
    /// - inserted objects are announced, not loaded.
    ///
    /// Objects that are not registered, and faults, cost nothing. One objects-did-change
    /// notification follows, with the five sets; it is also returned. Runs on the context's queue (it waits for it when
    /// called elsewhere).
    ///
    /// ```swift
    /// let observation = importer.observeDidSave { note in
    ///     main.mergeChanges(fromContextDidSave: note)   // DataStack's smart merge does this for you
    /// }
    /// ```
    @discardableResult
    public func mergeChanges(fromContextDidSave note: DidSaveNotification) -> ObjectsDidChangeNotification {
        performAndWait { mergeOnQueue(note) }
    }

    /// Merges a save whose rows were read before, off this queue (see ``PrefetchedRows``):
    /// objects those rows cover are refreshed from them, and by-ID fetches made while the merge
    /// is announced (a results controller loading the inserted objects) use them too, so the
    /// store is read on this queue only for what they do not cover.
    package func mergeChanges(fromContextDidSave note: DidSaveNotification, prefetched: PrefetchedRows) -> ObjectsDidChangeNotification {
        performAndWait { mergeOnQueue(note, prefetched: prefetched) }
    }

    /// Merges the same saved-object IDs into several contexts (each on its own queue).
    public static func mergeChanges(fromRemoteContextSave note: DidSaveNotification, into contexts: [ManagedObjectContext]) {
        for context in contexts { context.mergeChanges(fromContextDidSave: note) }
    }

    func mergeOnQueue(_ note: DidSaveNotification, prefetched: PrefetchedRows = PrefetchedRows()) -> ObjectsDidChangeNotification {
        // Rows read ahead serve a context without a parent (a child reads through its parent's
        // unsaved state), and not for objects a save merged since their read touched.
        var prefetched = parent == nil ? prefetched : PrefetchedRows()
        if prefetched.isEmpty {
            state.mergedSaves.record(note)
        } else {
            state.mergedSaves.screen(&prefetched)
        }
        var invalidated = Set<ManagedObjectID>()
        for object in registeredObjects(among: note.deleted) {
            detachFromInverses(object)
            invalidate(object)
        }
        var targets: [ManagedObject] = []
        for object in registeredObjects(among: note.updated)
        where object.hasData && object.lifecycle != .invalidated && object.lifecycle != .inserted {
            targets.append(object)
        }
        var refreshed = Set<ManagedObjectID>()
        var notReread = Set<ManagedObjectID>()
        if !targets.isEmpty {
            // Prefetched rows serve the objects they cover, unless the object is newer (saved
            // here since the read); a parent's unsaved state comes before the store's.
            var states: [ManagedObjectID: ObjectState] = [:]
            var toRead: [ManagedObjectID] = []
            for object in targets {
                switch prefetched.lookup(object.objectID) {
                case .some(.some(let row)) where row.version >= object.version: states[object.objectID] = ObjectState(row: row)
                case .some(.none): break  // deleted when the rows were read
                default: toRead.append(object.objectID)
                }
            }
            if !toRead.isEmpty {
                do {
                    states.merge(try loadStates(toRead)) { _, read in read }
                } catch {
                    notReread = Set(toRead)
                    report(
                        ContextFailure(
                            operation: "merge a save (\(toRead.count) objects could not be re-read; they keep their old values)", object: nil, property: nil,
                            error: error))
                }
            }
            for object in targets where !notReread.contains(object.objectID) {
                guard let fresh = states[object.objectID], !fresh.isDeleted else {
                    invalidated.insert(object.objectID)
                    detachFromInverses(object)
                    invalidate(object)
                    continue
                }
                refreshKeepingChanges(object, fresh, storeWins: mergePolicy == .mergeByPropertyStoreTrump)
                refreshed.insert(object.objectID)
            }
        }
        var change = ObjectsDidChangeNotification(
            context: identifier, inserted: note.inserted, updated: refreshed, deleted: note.deleted,
            refreshed: refreshed, invalidated: invalidated, invalidatedAll: false)
        change.notReread = notReread
        // While the merge is announced, by-ID fetches of the save's objects use the rows read.
        let outer = state.mergeRows
        state.mergeRows = prefetched.isEmpty ? outer : prefetched
        defer { state.mergeRows = outer }
        postObjectsDidChange(change)
        return change
    }

    /// The registered objects whose IDs are in `ids`, found from the smaller side: a large save
    /// merged into a context that holds a few of its objects costs as many lookups as the context
    /// holds, not as the save has.
    private func registeredObjects(among ids: Set<ManagedObjectID>) -> [ManagedObject] {
        if ids.count <= state.registered.count {
            return ids.compactMap { state.registered[$0] }
        }
        return state.registered.compactMap { ids.contains($0.key) ? $0.value : nil }
    }

    /// Takes fresh committed values, re-applying local unsaved edits on top.
    private func refreshKeepingChanges(_ object: ManagedObject, _ fresh: ObjectState, storeWins: Bool) {
        if !object.refresh(from: fresh, storeWins: storeWins) {
            state.forgetUpdate(ObjectIdentifier(object))
        }
    }

    /// Removes a departing object from the loaded to-many sets that hold it.
    private func detachFromInverses(_ object: ManagedObject) {
        guard object.hasData else { return }
        for relationship in object.layout.relationships where !relationship.isToMany {
            guard let target = object.toOne[relationship.index], let other = state.registered[target],
                let inverse = relationship.description.inverse, let i = other.layout.relationshipIndex[inverse],
                other.layout.relationships[i].isToMany
            else { continue }
            other.forgetDestinationID(object.objectID, at: i)
        }
    }

    /// Re-reads `object`. With `mergeChanges` false it becomes a fault and loses its unsaved
    /// changes (and the values it held: if its row is gone by the time the fault is read, it
    /// reads as empty, as a fault never read does); with true it takes the committed values and
    /// keeps its unsaved edits on top.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) throws(AmbarError) {
        try checkQueue("refresh")
        guard object.managedObjectContext === self, object.lifecycle != .invalidated else {
            throw .foreignObject(object.objectID, operation: "refresh")
        }
        guard object.lifecycle != .inserted else { return }
        if mergeChanges && object.hasChanges {
            guard let fresh = try loadStates([object.objectID])[object.objectID] else { throw .objectNotFound(object.objectID) }
            refreshKeepingChanges(object, fresh, storeWins: false)
        } else {
            let key = ObjectIdentifier(object)
            state.forgetUpdate(key)
            if state.deleted.removeValue(forKey: key) != nil { object.markRegistered() }
            object.turnIntoFault()
        }
        postObjectsDidChange(
            ObjectsDidChangeNotification(
                context: identifier, inserted: [], updated: [], deleted: [], refreshed: [object.objectID],
                invalidated: [], invalidatedAll: false))
    }

    /// Refreshes every registered object: unchanged ones become faults (they re-load on next
    /// access); changed ones take the committed values and keep their unsaved edits.
    public func refreshAllObjects() throws(AmbarError) {
        try checkQueue("refreshAllObjects")
        var refreshed = Set<ManagedObjectID>()
        let changed = state.registered.values.filter { $0.hasData && $0.isUpdated }
        let states = try loadStates(changed.map(\.objectID))
        for object in state.registered.values where object.hasData && object.lifecycle == .registered {
            if object.isUpdated, let fresh = states[object.objectID] {
                refreshKeepingChanges(object, fresh, storeWins: false)
            } else if !object.isUpdated {
                object.turnIntoFault()
            }
            refreshed.insert(object.objectID)
        }
        var note = ObjectsDidChangeNotification(
            context: identifier, inserted: [], updated: [], deleted: [], refreshed: refreshed,
            invalidated: [], invalidatedAll: false)
        note.refreshedAll = true
        postObjectsDidChange(note)
    }

    /// Discards every unsaved change: inserted objects leave, deleted ones come back, updated
    /// ones take their committed values.
    public func rollback() throws(AmbarError) {
        try checkQueue("rollback")
        var removed = Set<ManagedObjectID>()
        var restored = Set<ManagedObjectID>()
        for object in Array(state.inserted.values) {
            removed.insert(object.objectID)
            invalidate(object)
        }
        for object in Array(state.deleted.values) + Array(state.updated.values) where object.lifecycle != .invalidated {
            object.revertToCommitted()
            restored.insert(object.objectID)
        }
        state.clearChanges()
        postObjectsDidChange(
            ObjectsDidChangeNotification(
                context: identifier, inserted: [], updated: restored, deleted: removed, refreshed: restored,
                invalidated: removed, invalidatedAll: false))
    }

    /// Forgets every object: all registered objects become invalid and unsaved changes are lost.
    public func reset() throws(AmbarError) {
        try checkQueue("reset")
        resetOnQueue()
    }

    package func resetOnQueue() {
        let all = Array(state.registered.values) + Array(state.inserted.values)
        for object in all {
            object.markInvalid()
        }
        state.registered.emptyForReuse()
        state.clearChanges()
        objectsDidChangeObservers.post(
            ObjectsDidChangeNotification(
                context: identifier, inserted: [], updated: [], deleted: [], refreshed: [], invalidated: [],
                invalidatedAll: true))
    }
}
