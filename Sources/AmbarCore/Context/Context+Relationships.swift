import Foundation

extension ManagedObjectContext {
    // MARK: - Primitive mutations (no inverse handling)

    private func primitiveSetToOne(_ object: ManagedObject, _ index: Int, _ id: ManagedObjectID?) throws(AmbarError) {
        try object.fireFaultOrThrow()
        guard object.setDestinationID(id, at: index) else { return }
        objectDidChange(object)
    }

    private func primitiveAdd(_ object: ManagedObject, _ index: Int, _ id: ManagedObjectID) throws(AmbarError) {
        try object.fireFaultOrThrow()
        object.addDestinationID(id, at: index)
        objectDidChange(object)
    }

    private func primitiveRemove(_ object: ManagedObject, _ index: Int, _ id: ManagedObjectID) throws(AmbarError) {
        try object.fireFaultOrThrow()
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
        var list = try requireOrderedToMany(object, index)
        let withoutIt = list.filter { $0 != destination.objectID }
        guard position >= 0, position <= withoutIt.count else {
            throw .invalidFetchRequest(
                "position \(position) is outside '\(object.entityName).\(object.layout.relationships[index].name)' (0…\(withoutIt.count))")
        }
        try addToMany(object, index, destination)
        list = withoutIt
        list.insert(destination.objectID, at: position)
        try setOrder(object, index, list)
    }

    /// Moves the destination at `from` to `to` in the ordered relationship at `index`.
    func moveOrdered(_ object: ManagedObject, _ index: Int, from: Int, to: Int) throws(AmbarError) {
        try requireOrdered(object, index)
        var list = try requireOrderedToMany(object, index)
        guard list.indices.contains(from), list.indices.contains(to) else {
            throw .invalidFetchRequest(
                "cannot move from \(from) to \(to) in '\(object.entityName).\(object.layout.relationships[index].name)', which holds \(list.count) objects")
        }
        let id = list.remove(at: from)
        list.insert(id, at: to)
        try setOrder(object, index, list)
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
        let current = try requireToMany(object, index)
        for id in current where !wanted.contains(id) {
            if let old = registeredOrFault(for: id) { try removeFromToMany(object, index, old) }
        }
        for destination in destinations where !current.contains(destination.objectID) { try addToMany(object, index, destination) }
        try setOrder(object, index, wanted)
    }

    private func setOrder(_ object: ManagedObject, _ index: Int, _ list: [ManagedObjectID]) throws(AmbarError) {
        try object.fireFaultOrThrow()
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
        try object.fireFaultOrThrow()
        let old = object.toOne[index]
        guard old != destination?.objectID else { return }
        if let old, let oldObject = state.registered[old], let inv = inverseIndex(relationship, on: oldObject) {
            try unlink(oldObject, inv, from: object.objectID)
        }
        if let destination, let inv = inverseIndex(relationship, on: destination) {
            try link(destination, inv, to: object)
        }
        try primitiveSetToOne(object, index, destination?.objectID)
    }

    func addToMany(_ object: ManagedObject, _ index: Int, _ destination: ManagedObject) throws(AmbarError) {
        let relationship = object.layout.relationships[index]
        if destination.lifecycle == .detached { try insert(destination) }
        try checkDestination(destination, for: object, relationship)
        guard try !requireToMany(object, index).contains(destination.objectID) else { return }
        if let inv = inverseIndex(relationship, on: destination) {
            try link(destination, inv, to: object)
        }
        try primitiveAdd(object, index, destination.objectID)
    }

    func removeFromToMany(_ object: ManagedObject, _ index: Int, _ destination: ManagedObject) throws(AmbarError) {
        let relationship = object.layout.relationships[index]
        try checkDestination(destination, for: object, relationship)
        guard try requireToMany(object, index).contains(destination.objectID) else { return }
        if let inv = inverseIndex(relationship, on: destination) {
            try unlink(destination, inv, from: object.objectID)
        }
        try primitiveRemove(object, index, destination.objectID)
    }

    /// Makes `target`'s relationship at `index` include `source` (the inverse side of a change).
    private func link(_ target: ManagedObject, _ index: Int, to source: ManagedObject) throws(AmbarError) {
        let relationship = target.layout.relationships[index]
        if relationship.isToMany {
            if case .joinTable = relationship.mapping { _ = try requireToMany(target, index) }
            try primitiveAdd(target, index, source.objectID)
            return
        }
        try target.fireFaultOrThrow()
        // A to-one inverse: whatever `target` pointed to before loses it.
        if let previous = target.toOne[index], previous != source.objectID,
            let previousObject = state.registered[previous],
            let forward = relationship.description.inverse.flatMap({ previousObject.layout.relationshipIndex[$0] })
        {
            if previousObject.layout.relationships[forward].isToMany {
                try primitiveRemove(previousObject, forward, target.objectID)
            } else if previousObject.toOne[forward] == target.objectID {
                try primitiveSetToOne(previousObject, forward, nil)
            }
        }
        try primitiveSetToOne(target, index, source.objectID)
    }

    /// Removes `source` from `target`'s relationship at `index` (the inverse side of a change).
    private func unlink(_ target: ManagedObject, _ index: Int, from source: ManagedObjectID) throws(AmbarError) {
        let relationship = target.layout.relationships[index]
        if relationship.isToMany {
            if case .joinTable = relationship.mapping { _ = try requireToMany(target, index) }
            try primitiveRemove(target, index, source)
        } else {
            try target.fireFaultOrThrow()
            if target.toOne[index] == source { try primitiveSetToOne(target, index, nil) }
        }
    }

    // MARK: - Delete

    /// Deletes `object`, applying its relationships' delete rules (nullify and cascade now; deny
    /// is checked at save). The deletion reaches the store at the next save.
    ///
    /// Everything the rules reach is read first: when a read fails (the database server out of
    /// reach, say), the call throws and nothing is deleted, rather than applying the rules to
    /// relationships that only look empty.
    ///
    /// - Throws: ``AmbarError/wrongQueue(context:operation:)`` or
    ///   ``AmbarError/foreignObject(_:operation:)`` when the object is not this context's; the
    ///   store's error (``AmbarError/serverUnavailable(server:operation:reason:cause:)``,
    ///   ``AmbarError/storage(operation:code:message:cause:)``) when a relationship the rules need
    ///   cannot be read.
    public func delete(_ object: ManagedObject) throws(AmbarError) {
        try checkQueue("delete")
        guard object.managedObjectContext === self, object.lifecycle != .invalidated else {
            throw .foreignObject(object.objectID, operation: "delete")
        }
        var reached = Set<ObjectIdentifier>()
        try readForDeletion(object, &reached)
        var visited = Set<ObjectIdentifier>()
        try deleteApplyingRules(object, &visited)
    }

    /// The destinations of `object`'s relationship under a delete rule (loaded, or read now).
    private func ruleDestinations(_ object: ManagedObject, _ relationship: ResolvedRelationship) throws(AmbarError) -> [ManagedObject] {
        if relationship.isToMany {
            return try requireToMany(object, relationship.index).compactMap { registeredOrFault(for: $0) }
        }
        return object.toOne[relationship.index].flatMap { registeredOrFault(for: $0) }.map { [$0] } ?? []
    }

    /// Reads everything the delete rules from `object` will change (its values, the cascaded
    /// objects, the inverses to nullify), so that applying them afterwards reads nothing.
    private func readForDeletion(_ object: ManagedObject, _ reached: inout Set<ObjectIdentifier>) throws(AmbarError) {
        guard object.lifecycle != .deleted, object.lifecycle != .invalidated,
            reached.insert(ObjectIdentifier(object)).inserted
        else { return }
        try object.fireFaultOrThrow()
        for relationship in object.layout.relationships where relationship.description.deleteRule != .deny {
            switch relationship.description.deleteRule {
            case .cascade:
                for destination in try ruleDestinations(object, relationship) { try readForDeletion(destination, &reached) }
            case .nullify:
                for destination in try ruleDestinations(object, relationship) where destination.lifecycle != .deleted {
                    guard let inv = inverseIndex(relationship, on: destination) else { continue }
                    try destination.fireFaultOrThrow()
                    let inverse = destination.layout.relationships[inv]
                    if inverse.isToMany, case .joinTable = inverse.mapping { _ = try requireToMany(destination, inv) }
                }
            case .noAction, .deny:
                break
            }
        }
    }

    private func deleteApplyingRules(_ object: ManagedObject, _ visited: inout Set<ObjectIdentifier>) throws(AmbarError) {
        guard object.lifecycle != .deleted, object.lifecycle != .invalidated,
            visited.insert(ObjectIdentifier(object)).inserted
        else { return }
        try object.fireFaultOrThrow()
        for relationship in object.layout.relationships where relationship.description.deleteRule != .deny {
            let destinations = try ruleDestinations(object, relationship)
            switch relationship.description.deleteRule {
            case .cascade:
                for destination in destinations { try deleteApplyingRules(destination, &visited) }
            case .nullify:
                for destination in destinations where destination.lifecycle != .deleted {
                    if let inv = inverseIndex(relationship, on: destination) { try unlink(destination, inv, from: object.objectID) }
                }
            case .noAction, .deny:
                break
            }
        }
        let key = ObjectIdentifier(object)
        state.forgetUpdate(key)
        if object.lifecycle == .inserted {
            // Never saved: the object is simply forgotten. Observers that were told of the insert
            // are told of the delete.
            state.removeInserted(key)
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
