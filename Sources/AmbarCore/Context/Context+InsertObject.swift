import Foundation

extension ManagedObjectContext {
    /// Inserts `object`, made outside any context with its own initializer (as in SwiftData),
    /// with the objects made outside a context that its relationships lead to.
    ///
    /// ```swift
    /// let home = Project(name: "Home")           // @Model classes, made with their own initializers
    /// let task = TaskItem(title: "Paint the fence")
    /// task.project = home
    /// try context.insert(task)                   // inserts both; home.tasks now holds task
    /// try context.save()
    /// ```
    ///
    /// Each object gets its entity's defaults, then ``ManagedObject/awakeFromInsert()`` runs, then
    /// the values it was given apply; its relationships are set through the context, so inverses
    /// follow. Setting a relationship of an object of this context to an object made outside a
    /// context inserts that object too. Inserting an object that is already this context's does
    /// nothing.
    ///
    /// - Throws: ``AmbarError/wrongQueue(context:operation:)``; ``AmbarError/invalidModel(_:)`` when
    ///   the object's class does not declare its entity (`@Model`) or this context's model maps the
    ///   entity to another class; ``AmbarError/unknownEntity(_:)``; ``AmbarError/foreignObject(_:operation:)``
    ///   when the object, or an object its relationships lead to, belongs to another context;
    ///   ``AmbarError/typeMismatch(entity:property:expected:got:)`` when a relationship leads to an
    ///   object of the wrong entity. Nothing is inserted then.
    public func insert(_ object: ManagedObject) throws(AmbarError) {
        try checkQueue("insert")
        if object.lifecycle != .detached {
            guard object.managedObjectContext === self, object.lifecycle != .invalidated else {
                throw .foreignObject(object.objectID, operation: "inserting an object of another context (pass its objectID and use object(with:) there)")
            }
            return
        }
        let batch = try detachedObjects(reachableFrom: object)
        var relationships: [(object: ManagedObject, made: EntityLayout, state: DetachedState)] = []
        for (detached, layout) in batch {
            if let state = adopt(detached, as: layout) { relationships.append(state) }
        }
        for (object, made, state) in relationships {
            for (i, destination) in state.toOne.sorted(by: { $0.key < $1.key }) {
                try object.setObject(destination, forKey: made.relationships[i].name)
            }
            for (i, list) in state.toMany.sorted(by: { $0.key < $1.key }) {
                let name = made.relationships[i].name
                if made.relationships[i].isOrdered {
                    try object.setOrderedObjects(list, forKey: name)
                } else {
                    for destination in list { try object.addObject(destination, toKey: name) }
                }
            }
        }
    }

    /// `object` and the objects made outside a context that its relationships lead to, each with
    /// its layout in this context's model; throws, before anything changes, when one cannot be
    /// inserted or a relationship cannot be set.
    private func detachedObjects(reachableFrom object: ManagedObject) throws(AmbarError) -> [(ManagedObject, EntityLayout)] {
        let resolved = persistentStoreCoordinator.model.resolved
        var batch: [(ManagedObject, EntityLayout)] = []
        var seen = Set<ObjectIdentifier>()
        var pending = [object]
        while let next = pending.popLast() {
            guard seen.insert(ObjectIdentifier(next)).inserted else { continue }
            if let problem = next.detached?.problem { throw problem }
            let layout = try layoutForInsert(of: next)
            let made = next.layout
            let links = (next.detached?.toOne.map { ($0.key, [$0.value]) } ?? []) + (next.detached?.toMany.map { ($0.key, $0.value) } ?? [])
            for (i, destinations) in links {
                let name = made.relationships[i].name
                guard let r = layout.relationshipIndex[name] else { throw .unknownProperty(entity: layout.name, property: name) }
                let expected = layout.relationships[r].description.destination
                for destination in destinations {
                    let destinationLayout: EntityLayout
                    if destination.lifecycle == .detached {
                        pending.append(destination)
                        guard let found = resolved.entities[Swift.type(of: destination).entityName] else {
                            throw .unknownEntity(Swift.type(of: destination).entityName)
                        }
                        destinationLayout = found
                    } else {
                        guard destination.managedObjectContext === self, destination.lifecycle != .invalidated else {
                            throw .foreignObject(
                                destination.objectID, operation: "inserting \(layout.name), whose '\(name)' leads to an object of another context")
                        }
                        destinationLayout = destination.layout
                    }
                    guard destinationLayout.isKind(of: expected) else {
                        throw .typeMismatch(
                            entity: layout.name, property: name, expected: .string,
                            got: "\(destinationLayout.name) object (expected \(expected))")
                    }
                }
            }
            batch.append((next, layout))
        }
        return batch
    }

    /// The layout of `object`'s entity in this context's model, checked to be its class's.
    private func layoutForInsert(of object: ManagedObject) throws(AmbarError) -> EntityLayout {
        let type = Swift.type(of: object)
        let layout = try persistentStoreCoordinator.model.resolved.layout(type.entityName)
        guard ObjectIdentifier(layout.objectClass) == ObjectIdentifier(type) else {
            throw .invalidModel(
                "entity '\(layout.name)' is mapped to \(layout.objectClass), not \(type); build the model with ManagedObjectModel(declaring:) listing \(type)")
        }
        guard !layout.description.isAbstract else {
            throw .invalidModel("entity '\(layout.name)' is abstract; insert one of its sub-entities")
        }
        return layout
    }

    /// Makes a detached object an inserted object of this context: defaults, `awakeFromInsert`,
    /// then the values it was given. Returns its relationships to set, if it has any.
    private func adopt(_ object: ManagedObject, as layout: EntityLayout) -> (ManagedObject, EntityLayout, DetachedState)? {
        let made = object.layout
        let given = object.values
        let set = object.changedAttributes
        let detachedState = object.detached
        object.becomeInserted(into: self, as: layout)
        state.registered[object.objectID] = object
        state.addInserted(object)
        state.pendingInserted.insert(object.objectID)
        object.awakeFromInsert()
        for i in set {
            let attribute = made.attributes[i]
            guard let j = layout.attributeIndex[attribute.name], let value = given[i].coerced(to: layout.attributes[j].type) else { continue }
            object.setInitialValue(value, at: j)
        }
        guard let detachedState, !detachedState.toOne.isEmpty || !detachedState.toMany.isEmpty else { return nil }
        return (object, made, detachedState)
    }
}
