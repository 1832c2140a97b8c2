import Foundation

/// An object's values as a store or a parent context holds them: what fills a fault.
struct ObjectState: Sendable {
    let id: ManagedObjectID
    let version: Int64
    let values: RowValues
    let toOne: [ManagedObjectID?]
    /// Loaded to-many sets (nil where not loaded).
    var toMany: [Set<ManagedObjectID>?] = []
    /// The order of loaded ordered relationships, by relationship index.
    var order: [Int: [ManagedObjectID]] = [:]
    /// Whether the object is deleted (unsaved) in the parent.
    var isDeleted = false

    init(row: StoreRow) {
        id = row.id
        version = row.version
        values = row.values
        toOne = row.toOne
    }

    init(object: ManagedObject) {
        id = object.objectID
        version = object.version
        values = object.values
        toOne = object.toOne
        toMany = object.toMany
        order = object.order
        isDeleted = object.lifecycle == .deleted
    }
}

/// Faults fetched together with a batch size: firing one loads its whole batch.
final class FaultBatch {
    let ids: [ManagedObjectID]
    let size: Int
    var position: [ManagedObjectID: Int] = [:]

    init(ids: [ManagedObjectID], size: Int) {
        self.ids = ids
        self.size = size
        for (i, id) in ids.enumerated() { position[id] = i }
    }

    func batch(containing id: ManagedObjectID) -> ArraySlice<ManagedObjectID> {
        guard let i = position[id] else { return [id] }
        let start = (i / size) * size
        return ids[start..<min(start + size, ids.count)]
    }
}

extension ManagedObjectContext {
    /// The current states of `ids`: from the parent chain where it has them, else from the store.
    func loadStates(_ ids: [ManagedObjectID]) throws(AmbarError) -> [ManagedObjectID: ObjectState] {
        var result: [ManagedObjectID: ObjectState] = [:]
        var missing = ids.filter { !$0.isTemporaryID }
        if let parent {
            let known = parent.performAndWait { parent.knownStates(ids) }
            result = known
            missing = missing.filter { known[$0] == nil }
        }
        if !missing.isEmpty {
            for row in try persistentStoreCoordinator.store.loadRows(missing) {
                result[row.id] = ObjectState(row: row)
            }
        }
        return result
    }

    /// States this context (or its ancestors) hold in memory, for a child. Runs on this queue.
    func knownStates(_ ids: [ManagedObjectID]) -> [ManagedObjectID: ObjectState] {
        var result: [ManagedObjectID: ObjectState] = [:]
        var rest: [ManagedObjectID] = []
        for id in ids {
            if let object = state.registered[id], object.hasData {
                result[id] = ObjectState(object: object)
            } else {
                rest.append(id)
            }
        }
        if let parent, !rest.isEmpty {
            let more = parent.performAndWait { parent.knownStates(rest) }
            result.merge(more) { a, _ in a }
        }
        return result
    }

    /// Loads the values of a fault (and of the rest of its batch); a read that fails throws and
    /// leaves the objects faults.
    func fillFault(_ object: ManagedObject) throws(AmbarError) {
        let ids = object.faultBatch.map { Array($0.batch(containing: object.objectID)) } ?? [object.objectID]
        let wanted = ids.filter { state.registered[$0].map { !$0.hasData } ?? false }
        let states = try loadStates(wanted.isEmpty ? [object.objectID] : wanted)
        for id in wanted {
            guard let target = state.registered[id], !target.hasData, let found = states[id] else { continue }
            target.apply(found)
        }
        if !object.hasData {
            // The row is gone (deleted elsewhere): the object reads as empty, as Core Data's
            // inaccessible faults do.
            Self.logger.debug("Fault \(object.objectID.uriString) has no row in the store; it reads as empty.")
            object.loadMissingRow()
        }
    }

    /// Loads the values of a fault for a call that cannot throw (a typed property's getter).
    func fulfillFault(_ object: ManagedObject) {
        do {
            try fillFault(object)
        } catch {
            // A failed read is not a missing row: the object stays a fault (its values read as
            // empty this time), the next access tries again, writes to it are refused, and the
            // context's failure observers are told (typed properties cannot throw).
            report(
                ContextFailure(
                    operation: "read a fault (it stays a fault; the next access reads it again)", object: object.objectID, property: nil, error: error))
        }
    }

    /// The destinations of a to-many relationship, loading and caching them on first use; a
    /// read that fails throws and caches nothing, so what depends on the set (delete rules,
    /// count limits, ordered positions, changes to it) fails instead of acting on an empty set.
    ///
    /// The stored set is overlaid with this context's unsaved changes: objects whose to-one
    /// inverse was changed in memory, and deleted objects.
    func requireToMany(_ object: ManagedObject, _ index: Int) throws(AmbarError) -> Set<ManagedObjectID> {
        if let loaded = object.toMany[index] { return loaded }
        try object.fireFaultOrThrow()
        let relationship = object.layout.relationships[index]
        var baseOrder: [ManagedObjectID] = []
        if !object.objectID.isTemporaryID && object.lifecycle != .inserted {
            if let parent,
                let fromParent = try parent.performAndWait({ () throws(AmbarError) in try parent.knownOrderedToMany(object.objectID, relationship.name) })
            {
                baseOrder = fromParent
            } else {
                baseOrder = try persistentStoreCoordinator.store.loadToMany(object.objectID, relationship)
            }
        }
        let (current, order) = overlay(object, relationship, on: baseOrder)
        object.setLoadedToMany(current, base: Set(baseOrder), order: order, baseOrder: relationship.isOrdered ? baseOrder : nil, at: index)
        return current
    }

    /// The destinations of a to-many relationship for a call that cannot throw (a typed
    /// property's getter): when the read fails, the failure is reported, this context's own
    /// unsaved additions are returned, and nothing is cached (the next use reads again).
    func loadToMany(_ object: ManagedObject, _ index: Int) -> Set<ManagedObjectID> {
        do {
            return try requireToMany(object, index)
        } catch {
            let relationship = object.layout.relationships[index]
            report(
                ContextFailure(
                    operation: "load a to-many relationship (not kept; the next use reads it again)", object: object.objectID,
                    property: relationship.name, error: error))
            return overlay(object, relationship, on: []).current
        }
    }

    /// `baseOrder` (the stored destinations) with this context's unsaved changes applied, and
    /// the resulting order for an ordered relationship.
    private func overlay(
        _ object: ManagedObject, _ relationship: ResolvedRelationship, on baseOrder: [ManagedObjectID]
    ) -> (current: Set<ManagedObjectID>, order: [ManagedObjectID]?) {
        let base = Set(baseOrder)
        var current = base
        if case .inverseForeignKey = relationship.mapping, let inverse = relationship.description.inverse {
            for candidate in state.inserted.values.map({ $0 }) + state.updated.values.map({ $0 }) {
                guard let i = candidate.layout.relationshipIndex[inverse],
                    candidate.changedRelationships.contains(i)
                        || candidate.lifecycle == .inserted
                else { continue }
                guard candidate.layout.isKind(of: relationship.description.destination) else { continue }
                if candidate.toOne[i] == object.objectID {
                    current.insert(candidate.objectID)
                } else {
                    current.remove(candidate.objectID)
                }
            }
        }
        for deleted in state.deleted.values { current.remove(deleted.objectID) }
        guard relationship.isOrdered else { return (current, nil) }
        // The stored order, without what this context removed, then what it added.
        let added = current.subtracting(base).sorted(by: PredicateEvaluation.idPrecedes)
        return (current, baseOrder.filter { current.contains($0) } + added)
    }

    /// The destinations of an ordered relationship in order (loading them on first use); for
    /// an unordered one, in ID order. A read that fails throws (see ``requireToMany(_:_:)``).
    func requireOrderedToMany(_ object: ManagedObject, _ index: Int) throws(AmbarError) -> [ManagedObjectID] {
        let set = try requireToMany(object, index)
        if let list = object.order[index] { return list }
        return set.sorted(by: PredicateEvaluation.idPrecedes)
    }

    /// ``requireOrderedToMany(_:_:)`` for a call that cannot throw: a failed read is reported
    /// and gives this context's unsaved additions.
    func loadOrderedToMany(_ object: ManagedObject, _ index: Int) -> [ManagedObjectID] {
        let set = loadToMany(object, index)
        if let list = object.order[index] { return list }
        return set.sorted(by: PredicateEvaluation.idPrecedes)
    }

    /// An ordered to-many list this context (or an ancestor) has loaded, for a child.
    func knownOrderedToMany(_ id: ManagedObjectID, _ relationship: String) throws(AmbarError) -> [ManagedObjectID]? {
        if let object = state.registered[id], let i = object.layout.relationshipIndex[relationship] {
            return try requireOrderedToMany(object, i)
        }
        if let parent { return try parent.performAndWait { () throws(AmbarError) in try parent.knownOrderedToMany(id, relationship) } }
        return nil
    }
}
