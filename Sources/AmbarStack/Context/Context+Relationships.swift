import Foundation

extension ManagedObjectContext {
    // MARK: - Primitive mutations (no inverse handling)

    private func primitiveSetToOne(_ object: ManagedObject, _ index: Int, _ id: ManagedObjectID?) {
        object.fireFaultIfNeeded()
        guard object.setDestinationID(id, at: index) else { return }
        objectDidChange(object)
    }

    private func primitiveAdd(_ object: ManagedObject, _ index: Int, _ id: ManagedObjectID) {
        object.fireFaultIfNeeded()
        object.addDestinationID(id, at: index)
        objectDidChange(object)
    }

    private func primitiveRemove(_ object: ManagedObject, _ index: Int, _ id: ManagedObjectID) {
        object.fireFaultIfNeeded()
        object.removeDestinationID(id, at: index)
        objectDidChange(object)
    }

    // MARK: - Ordered relationships

    /// Throws unless the relationship at `index` is ordered.
    private func requireOrdered(_ object: ManagedObject, _ index: Int) throws(AmbarError) {
        let relationship = object.layout.relationships[index]
        guard relationship.isOrdered else {
            throw .invalidFetchRequest(
                "'\(object.entityName).\(relationship.name)' is not an ordered relationship; use the set API (objects(forKey:), addObject(_:toKey:))")
        }
    }

    /// Inserts `destination` into the ordered relationship at `index`, at `position` (it moves
    /// there if it is already in the relationship). The inverse is kept in step.
    func insertOrdered(_ object: ManagedObject, _ index: Int, _ destination: ManagedObject, at position: Int) throws(AmbarError) {
        try requireOrdered(object, index)
        var list = loadOrderedToMany(object, index)
        let withoutIt = list.filter { $0 != destination.objectID }
        guard position >= 0, position <= withoutIt.count else {
            throw .invalidFetchRequest(
                "position \(position) is outside '\(object.entityName).\(object.layout.relationships[index].name)' (0…\(withoutIt.count))")
        }
        try addToMany(object, index, destination)
        list = withoutIt
        list.insert(destination.objectID, at: position)
        setOrder(object, index, list)
    }

    /// Moves the destination at `from` to `to` in the ordered relationship at `index`.
    func moveOrdered(_ object: ManagedObject, _ index: Int, from: Int, to: Int) throws(AmbarError) {
        try requireOrdered(object, index)
        var list = loadOrderedToMany(object, index)
        guard list.indices.contains(from), list.indices.contains(to) else {
            throw .invalidFetchRequest(
                "cannot move from \(from) to \(to) in '\(object.entityName).\(object.layout.relationships[index].name)', which holds \(list.count) objects")
        }
        let id = list.remove(at: from)
        list.insert(id, at: to)
        setOrder(object, index, list)
    }

    /// Replaces the destinations of the ordered relationship at `index` with `destinations`, in
    /// that order, keeping inverses in step.
    func setOrdered(_ object: ManagedObject, _ index: Int, _ destinations: [ManagedObject]) throws(AmbarError) {
        try requireOrdered(object, index)
        let wanted = destinations.map(\.objectID)
        guard Set(wanted).count == wanted.count else {
            throw .invalidFetchRequest(
                "an ordered relationship holds each object once; the list given to '\(object.entityName).\(object.layout.relationships[index].name)' repeats one"
            )
        }
        let current = loadToMany(object, index)
        for id in current where !wanted.contains(id) {
            if let old = registeredOrFault(for: id) { try removeFromToMany(object, index, old) }
        }
        for destination in destinations where !current.contains(destination.objectID) { try addToMany(object, index, destination) }
        setOrder(object, index, wanted)
    }

    private func setOrder(_ object: ManagedObject, _ index: Int, _ list: [ManagedObjectID]) {
        guard object.setOrder(list, at: index) else { return }
        objectDidChange(object)
    }

    private func checkDestination(_ destination: ManagedObject, for object: ManagedObject, _ relationship: ResolvedRelationship) throws(AmbarError) {
        guard destination.managedObjectContext === self, destination.lifecycle != .invalidated else {
            throw .foreignObject(destination.objectID, operation: "setting \(object.entityName).\(relationship.name)")
        }
        guard destination.layout.isKind(of: relationship.description.destination) else {
            throw .typeMismatch(
                entity: object.entityName, property: relationship.name, expected: .string,
                got: "\(destination.entityName) object (expected \(relationship.description.destination))")
        }
    }

    /// The index of `relationship`'s inverse on `destination`, if it has one.
    private func inverseIndex(_ relationship: ResolvedRelationship, on destination: ManagedObject) -> Int? {
        relationship.description.inverse.flatMap { destination.layout.relationshipIndex[$0] }
    }

    // MARK: - Public-facing mutations with inverse maintenance

    func setToOne(_ object: ManagedObject, _ index: Int, _ destination: ManagedObject?) throws(AmbarError) {
        let relationship = object.layout.relationships[index]
        if let destination, destination.lifecycle == .detached { try insert(destination) }
        if let destination { try checkDestination(destination, for: object, relationship) }
        object.fireFaultIfNeeded()
        let old = object.toOne[index]
        guard old != destination?.objectID else { return }
        if let old, let oldObject = state.registered[old], let inv = inverseIndex(relationship, on: oldObject) {
            unlink(oldObject, inv, from: object.objectID)
        }
        if let destination, let inv = inverseIndex(relationship, on: destination) {
            link(destination, inv, to: object)
        }
        primitiveSetToOne(object, index, destination?.objectID)
    }

    func addToMany(_ object: ManagedObject, _ index: Int, _ destination: ManagedObject) throws(AmbarError) {
        let relationship = object.layout.relationships[index]
        if destination.lifecycle == .detached { try insert(destination) }
        try checkDestination(destination, for: object, relationship)
        guard !loadToMany(object, index).contains(destination.objectID) else { return }
        if let inv = inverseIndex(relationship, on: destination) {
            link(destination, inv, to: object)
        }
        primitiveAdd(object, index, destination.objectID)
    }

    func removeFromToMany(_ object: ManagedObject, _ index: Int, _ destination: ManagedObject) throws(AmbarError) {
        let relationship = object.layout.relationships[index]
        try checkDestination(destination, for: object, relationship)
        guard loadToMany(object, index).contains(destination.objectID) else { return }
        if let inv = inverseIndex(relationship, on: destination) {
            unlink(destination, inv, from: object.objectID)
        }
        primitiveRemove(object, index, destination.objectID)
    }

    /// Makes `target`'s relationship at `index` include `source` (the inverse side of a change).
    private func link(_ target: ManagedObject, _ index: Int, to source: ManagedObject) {
        let relationship = target.layout.relationships[index]
        if relationship.isToMany {
            if case .joinTable = relationship.mapping { _ = loadToMany(target, index) }
            primitiveAdd(target, index, source.objectID)
            return
        }
        target.fireFaultIfNeeded()
        // A to-one inverse: whatever `target` pointed to before loses it.
        if let previous = target.toOne[index], previous != source.objectID,
            let previousObject = state.registered[previous],
            let forward = relationship.description.inverse.flatMap({ previousObject.layout.relationshipIndex[$0] })
        {
            if previousObject.layout.relationships[forward].isToMany {
                primitiveRemove(previousObject, forward, target.objectID)
            } else if previousObject.toOne[forward] == target.objectID {
                primitiveSetToOne(previousObject, forward, nil)
            }
        }
        primitiveSetToOne(target, index, source.objectID)
    }

    /// Removes `source` from `target`'s relationship at `index` (the inverse side of a change).
    private func unlink(_ target: ManagedObject, _ index: Int, from source: ManagedObjectID) {
        let relationship = target.layout.relationships[index]
        if relationship.isToMany {
            if case .joinTable = relationship.mapping { _ = loadToMany(target, index) }
            primitiveRemove(target, index, source)
        } else {
            target.fireFaultIfNeeded()
            if target.toOne[index] == source { primitiveSetToOne(target, index, nil) }
        }
    }

    // MARK: - Delete

    /// Deletes `object`, applying its relationships' delete rules (nullify and cascade now; deny
    /// is checked at save). The deletion reaches the store at the next save.
    ///
    /// - Throws: ``AmbarError/wrongQueue(context:operation:)`` or
    ///   ``AmbarError/foreignObject(_:operation:)`` when the object is not this context's.
    public func delete(_ object: ManagedObject) throws(AmbarError) {
        try checkQueue("delete")
        guard object.managedObjectContext === self, object.lifecycle != .invalidated else {
            throw .foreignObject(object.objectID, operation: "delete")
        }
        var visited = Set<ObjectIdentifier>()
        deleteApplyingRules(object, &visited)
    }

    private func deleteApplyingRules(_ object: ManagedObject, _ visited: inout Set<ObjectIdentifier>) {
        guard object.lifecycle != .deleted, object.lifecycle != .invalidated,
            visited.insert(ObjectIdentifier(object)).inserted
        else { return }
        object.fireFaultIfNeeded()
        for relationship in object.layout.relationships where relationship.description.deleteRule != .deny {
            let destinations: [ManagedObject]
            if relationship.isToMany {
                destinations = loadToMany(object, relationship.index).compactMap { registeredOrFault(for: $0) }
            } else {
                destinations = object.toOne[relationship.index].flatMap { registeredOrFault(for: $0) }.map { [$0] } ?? []
            }
            switch relationship.description.deleteRule {
            case .cascade:
                for destination in destinations { deleteApplyingRules(destination, &visited) }
            case .nullify:
                for destination in destinations where destination.lifecycle != .deleted {
                    if let inv = inverseIndex(relationship, on: destination) { unlink(destination, inv, from: object.objectID) }
                }
            case .noAction, .deny:
                break
            }
        }
        let key = ObjectIdentifier(object)
        state.updated.removeValue(forKey: key)
        if object.lifecycle == .inserted {
            // Never saved: the object is simply forgotten. Observers that were told of the insert
            // are told of the delete.
            state.inserted.removeValue(forKey: key)
            if state.pendingInserted.remove(object.objectID) == nil {
                state.pendingDeleted.insert(object.objectID)
            }
            invalidate(object)
            return
        }
        object.markDeleted()
        state.deleted[key] = object
        state.pendingDeleted.insert(object.objectID)
    }
}
