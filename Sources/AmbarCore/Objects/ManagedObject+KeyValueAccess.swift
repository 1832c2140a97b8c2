extension ManagedObject {
    // Properties by name, as Core Data's key-value coding reads and writes them.

    /// The value of the attribute named `key`.
    ///
    /// - Throws: ``AmbarError/unknownProperty(entity:property:)`` when the entity has no such
    ///   attribute; the store's error when the object is a fault that cannot be read now (it
    ///   stays a fault).
    public func value(forKey key: String) throws(AmbarError) -> AttributeValue {
        guard let i = layout.attributeSlot(key) else {
            throw .unknownProperty(entity: layout.name, property: key)
        }
        return try readAttribute(at: i)
    }

    /// Sets the attribute named `key`.
    ///
    /// - Throws: ``AmbarError/unknownProperty(entity:property:)``, or
    ///   ``AmbarError/typeMismatch(entity:property:expected:got:)`` when the value does not fit.
    public func setValue(_ value: AttributeValue, forKey key: String) throws(AmbarError) {
        guard let i = layout.attributeSlot(key) else {
            throw .unknownProperty(entity: layout.name, property: key)
        }
        try setAttribute(value, at: i)
    }

    /// Sets the attribute named `key` from any storable Swift value.
    public func setValue(_ value: some AttributeValueConvertible, forKey key: String) throws(AmbarError) {
        try setValue(value.attributeValue, forKey: key)
    }

    /// The destination of the to-one relationship named `key`.
    public func object(forKey key: String) throws(AmbarError) -> ManagedObject? {
        let rel = try relationship(key, toMany: false)
        return try readDestination(at: rel.index)
    }

    /// Sets the to-one relationship named `key`, keeping its inverse in step.
    public func setObject(_ object: ManagedObject?, forKey key: String) throws(AmbarError) {
        let rel = try relationship(key, toMany: false)
        try setDestination(object, at: rel.index)
    }

    /// The destinations of the to-many relationship named `key`.
    public func objects(forKey key: String) throws(AmbarError) -> Set<ManagedObject> {
        let rel = try relationship(key, toMany: true)
        return try readDestinations(at: rel.index)
    }

    /// Adds `object` to the to-many relationship named `key`, keeping its inverse in step.
    public func addObject(_ object: ManagedObject, toKey key: String) throws(AmbarError) {
        let rel = try relationship(key, toMany: true)
        try insertDestination(object, at: rel.index)
    }

    /// Removes `object` from the to-many relationship named `key`, keeping its inverse in step.
    public func removeObject(_ object: ManagedObject, fromKey key: String) throws(AmbarError) {
        let rel = try relationship(key, toMany: true)
        try removeDestination(object, at: rel.index)
    }

    /// Replaces the destinations of the to-many relationship named `key`.
    public func setObjects(_ objects: Set<ManagedObject>, forKey key: String) throws(AmbarError) {
        let rel = try relationship(key, toMany: true)
        let current = destinations(at: rel.index)
        for old in current.subtracting(objects) { try removeDestination(old, at: rel.index) }
        for new in objects.subtracting(current) { try insertDestination(new, at: rel.index) }
    }

    func relationship(_ key: String, toMany: Bool) throws(AmbarError) -> ResolvedRelationship {
        guard let i = layout.relationshipIndex[key] else {
            throw .unknownProperty(entity: layout.name, property: key)
        }
        let rel = layout.relationships[i]
        guard rel.isToMany == toMany else {
            throw .invalidPredicate("'\(layout.name).\(key)' is a to-\(rel.isToMany ? "many" : "one") relationship")
        }
        return rel
    }
}
