extension ManagedObject {
    /// The destinations of the ordered to-many relationship named `key`, in their stored order.
    /// (``objects(forKey:)`` gives the same objects as a set.)
    ///
    /// ```swift
    /// let chapters = try book.orderedObjects(forKey: "chapters")
    /// try book.insertObject(prologue, at: 0, inOrderedKey: "chapters")
    /// try book.moveObject(at: 3, to: 1, inOrderedKey: "chapters")
    /// ```
    ///
    /// - Throws: ``AmbarError/unknownProperty(entity:property:)``, or
    ///   ``AmbarError/invalidFetchRequest(_:)`` when the relationship is not ordered.
    public func orderedObjects(forKey key: String) throws(AmbarError) -> [ManagedObject] {
        let relationship = try orderedRelationship(key)
        guard let context = managedObjectContext else { return detached?.toMany[relationship.index] ?? [] }
        return try context.requireOrderedToMany(self, relationship.index).compactMap { context.registeredOrFault(for: $0) }
    }

    /// Inserts `object` at `position` of the ordered relationship named `key` (moving it there
    /// if it is already in it), keeping the inverse in step. ``addObject(_:toKey:)`` appends.
    public func insertObject(_ object: ManagedObject, at position: Int, inOrderedKey key: String) throws(AmbarError) {
        let relationship = try orderedRelationship(key)
        if lifecycle == .detached, let detached { return try detached.insert(object, at: position, in: relationship.index, name: "\(layout.name).\(key)") }
        try checkMutable("changing \(layout.name).\(key)")
        guard let context = managedObjectContext else { throw .foreignObject(objectID, operation: "changing a relationship") }
        try context.insertOrdered(self, relationship.index, object, at: position)
    }

    /// Moves the object at `from` to `to` in the ordered relationship named `key`.
    public func moveObject(at from: Int, to: Int, inOrderedKey key: String) throws(AmbarError) {
        let relationship = try orderedRelationship(key)
        if lifecycle == .detached, let detached {
            let list = detached.toMany[relationship.index] ?? []
            guard list.indices.contains(from) else {
                throw .invalidFetchRequest("position \(from) is outside '\(layout.name).\(key)', which holds \(list.count) objects")
            }
            return try detached.insert(list[from], at: to, in: relationship.index, name: "\(layout.name).\(key)")
        }
        try checkMutable("changing \(layout.name).\(key)")
        guard let context = managedObjectContext else { throw .foreignObject(objectID, operation: "changing a relationship") }
        try context.moveOrdered(self, relationship.index, from: from, to: to)
    }

    /// Removes the object at `position` from the ordered relationship named `key`, keeping the
    /// inverse in step.
    public func removeObject(at position: Int, fromOrderedKey key: String) throws(AmbarError) {
        let list = try orderedObjects(forKey: key)
        guard list.indices.contains(position) else {
            throw .invalidFetchRequest("position \(position) is outside '\(layout.name).\(key)', which holds \(list.count) objects")
        }
        try removeObject(list[position], fromKey: key)
    }

    /// Replaces the destinations of the ordered relationship named `key` with `objects`, in
    /// that order, keeping inverses in step.
    public func setOrderedObjects(_ objects: [ManagedObject], forKey key: String) throws(AmbarError) {
        let relationship = try orderedRelationship(key)
        if lifecycle == .detached, let detached {
            detached.toMany[relationship.index] = []
            for object in objects { detached.add(object, at: relationship.index) }
            return
        }
        try checkMutable("changing \(layout.name).\(key)")
        guard let context = managedObjectContext else { throw .foreignObject(objectID, operation: "changing a relationship") }
        try context.setOrdered(self, relationship.index, objects)
    }

    private func orderedRelationship(_ key: String) throws(AmbarError) -> ResolvedRelationship {
        let relationship = try self.relationship(key, toMany: true)
        guard relationship.isOrdered else {
            throw .invalidFetchRequest("'\(layout.name).\(key)' is not an ordered relationship; use objects(forKey:) and addObject(_:toKey:)")
        }
        return relationship
    }
}

/// Declares a typed ordered to-many relationship of a ``ManagedObject`` subclass in one line:
/// `@OrderedToMany("chapters") var chapters: [Chapter]`. Assigning an array sets the
/// relationship's objects and their order, keeping inverses in step.
@propertyWrapper
public struct OrderedToMany<Destination: ManagedObject> {
    /// The relationship's name in the model.
    public let key: String

    /// Declares the property for the ordered to-many relationship named `key`.
    public init(_ key: String) { self.key = key }

    /// Not available: `@OrderedToMany` works only inside ``ManagedObject`` subclasses.
    @available(*, unavailable, message: "@OrderedToMany is only available on ManagedObject subclasses")
    public var wrappedValue: [Destination] {
        get { [] }
        set {}
    }

    /// Reads and writes through the enclosing object.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, [Destination]>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, OrderedToMany<Destination>>
    ) -> [Destination] {
        get {
            let key = object[keyPath: storageKeyPath].key
            do {
                return try object.orderedObjects(forKey: key).compactMap { $0 as? Destination }
            } catch {
                PropertyLog.failedRead(object, key, error)
                return []
            }
        }
        set {
            let key = object[keyPath: storageKeyPath].key
            do {
                try object.setOrderedObjects(newValue, forKey: key)
            } catch {
                PropertyLog.failedWrite(object, key, error)
            }
        }
    }
}
