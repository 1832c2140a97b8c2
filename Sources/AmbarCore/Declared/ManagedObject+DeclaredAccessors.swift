import Foundation

// The accessors the `@Model` macro writes for each declared property call these. They go through
// the same paths as `@Managed`, `@ToOne` and `@ToMany`: the attribute's slot is found by comparing
// names (hashing above 16 attributes), and what cannot be read or written is reported to the
// context's failure observers, since a property cannot throw.

extension ManagedObject {
    /// Reads the declared attribute `name` (for code the `@Model` macro writes).
    public func _declaredGet<V: DeclarableAttributeValue>(_ name: String, _ type: V.Type) -> V {
        guard let i = layout.attributeSlot(name) else {
            PropertyLog.unknown(self, name)
            return V.placeholder
        }
        return V(attributeValue: attribute(at: i)) ?? V.placeholder
    }

    /// Reads the declared attribute `name`, whose declaration has a default (for code the
    /// `@Model` macro writes). The default is the entity's: objects start with it.
    ///
    /// Its `default` parameter has the shape of the `Codable` reader's, so that the compiler
    /// picks this, the more specific one, for the attribute types.
    public func _declaredGet<V: DeclarableAttributeValue>(_ name: String, _ type: V.Type, default value: @autoclosure () -> V) -> V {
        _declaredGet(name, type)
    }

    /// Writes the declared attribute `name` (for code the `@Model` macro writes).
    public func _declaredSet<V: DeclarableAttributeValue>(_ name: String, _ value: V) {
        do throws(AmbarError) {
            guard let i = layout.attributeSlot(name) else { throw AmbarError.unknownProperty(entity: entityName, property: name) }
            try setAttribute(value.attributeValue, at: i)
        } catch {
            PropertyLog.failedWrite(self, name, error)
        }
    }

    /// Reads the declared `Codable` attribute `name`, decoding its JSON; `value` (the
    /// declaration's default, or `nil` for an optional type) while it is `nil` or cannot be
    /// decoded (for code the `@Model` macro writes). A `Codable` property needs a default value
    /// or an optional type: a read must give a value.
    public func _declaredGet<V: Codable & Sendable>(_ name: String, _ type: V.Type, default value: @autoclosure () -> V) -> V {
        do throws(AmbarError) {
            guard let i = layout.attributeSlot(name) else { throw AmbarError.unknownProperty(entity: entityName, property: name) }
            switch attribute(at: i) {
            case .data(let data):
                do {
                    return try JSONDecoder().decode(V.self, from: data)
                } catch {
                    throw AmbarError.transformationFailed(entity: entityName, property: name, transformer: "JSON", reason: "\(error)", cause: ErrorCause(error))
                }
            case .null:
                break
            case let other:
                throw AmbarError.typeMismatch(entity: entityName, property: name, expected: .transformable, got: other.kindName)
            }
        } catch {
            PropertyLog.failedRead(self, name, error)
        }
        return value()
    }

    /// Writes the declared `Codable` attribute `name` as JSON (for code the `@Model` macro writes).
    public func _declaredSet<V: Codable & Sendable>(_ name: String, _ value: V) {
        do throws(AmbarError) {
            guard let i = layout.attributeSlot(name) else { throw AmbarError.unknownProperty(entity: entityName, property: name) }
            let data: Data
            do {
                data = try JSONEncoder().encode(value)
            } catch {
                throw AmbarError.transformationFailed(entity: entityName, property: name, transformer: "JSON", reason: "\(error)", cause: ErrorCause(error))
            }
            try setAttribute(.data(data), at: i)
        } catch {
            PropertyLog.failedWrite(self, name, error)
        }
    }

    /// Reads the declared to-one relationship `name` (for code the `@Model` macro writes).
    public func _declaredGet<D: ManagedObject>(_ name: String, _ type: D?.Type, default value: @autoclosure () -> D? = nil) -> D? {
        do {
            return try object(forKey: name) as? D
        } catch {
            PropertyLog.failedRead(self, name, error)
            return nil
        }
    }

    /// Writes the declared to-one relationship `name`, keeping its inverse in step (for code the
    /// `@Model` macro writes).
    public func _declaredSet<D: ManagedObject>(_ name: String, _ value: D?) {
        do {
            try setObject(value, forKey: name)
        } catch {
            PropertyLog.failedWrite(self, name, error)
        }
    }

    /// Reads the declared to-many relationship `name` as a set (for code the `@Model` macro writes).
    public func _declaredGet<D: ManagedObject>(_ name: String, _ type: Set<D>.Type, default value: @autoclosure () -> Set<D> = []) -> Set<D> {
        do {
            return Set(try objects(forKey: name).compactMap { $0 as? D })
        } catch {
            PropertyLog.failedRead(self, name, error)
            return []
        }
    }

    /// Replaces the declared to-many relationship `name` (for code the `@Model` macro writes).
    public func _declaredSet<D: ManagedObject>(_ name: String, _ value: Set<D>) {
        do {
            try setObjects(Set(value.map { $0 as ManagedObject }), forKey: name)
        } catch {
            PropertyLog.failedWrite(self, name, error)
        }
    }

    /// Reads the declared to-many relationship `name` as an array: in its order when it is
    /// ordered, else by primary key (for code the `@Model` macro writes).
    public func _declaredGet<D: ManagedObject>(_ name: String, _ type: [D].Type, default value: @autoclosure () -> [D] = []) -> [D] {
        do {
            let rel = try relationship(name, toMany: true)
            if rel.description.isOrdered { return try orderedObjects(forKey: name).compactMap { $0 as? D } }
            return try objects(forKey: name).compactMap { $0 as? D }
                .sorted { PredicateEvaluation.idPrecedes($0.objectID, $1.objectID) }
        } catch {
            PropertyLog.failedRead(self, name, error)
            return []
        }
    }

    /// Replaces the declared to-many relationship `name`, in the array's order when it is ordered
    /// (for code the `@Model` macro writes).
    public func _declaredSet<D: ManagedObject>(_ name: String, _ value: [D]) {
        do {
            let rel = try relationship(name, toMany: true)
            if rel.description.isOrdered {
                try setOrderedObjects(value, forKey: name)
            } else {
                try setObjects(Set(value.map { $0 as ManagedObject }), forKey: name)
            }
        } catch {
            PropertyLog.failedWrite(self, name, error)
        }
    }
}
