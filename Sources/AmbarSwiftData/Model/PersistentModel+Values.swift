import AmbarStack
import Foundation

// The accessors `@Model` writes for each persisted property call these; the compiler picks the
// overload from the property's type (see `PersistedValues` for what each kind is stored as).

extension PersistentModel {
    // MARK: Attribute types

    /// Reads an attribute (for code `@Model` writes).
    ///
    /// Inlinable, so that the model's module specializes it for the attribute's type: the read
    /// of a model in a context, on its queue, is then one lookup and one conversion.
    @inlinable
    public func _persistedValue<V: DeclarableAttributeValue>(forKey keyPath: KeyPath<Self, V>, _ name: String) -> V {
        if let stored = persistentBackingData.storedAttribute(name), let value = V(attributeValue: stored) { return value }
        return _readAttribute(name, as: V.self)
    }

    /// Reads an attribute the general way: before insertion, off the context's queue, or when
    /// the quick read finds no value of the type (the failure is reported).
    @usableFromInline
    func _readAttribute<V: DeclarableAttributeValue>(_ name: String, as type: V.Type) -> V {
        persistentBackingData.read(name, placeholder: V.placeholder) { object, _ in try PersistedValues.read(object, name, as: V.self) }
    }

    /// Writes an attribute (for code `@Model` writes).
    public func _setPersistedValue<V: DeclarableAttributeValue>(forKey keyPath: KeyPath<Self, V>, _ name: String, to value: V) {
        persistentBackingData.write(name, value) { object, _ in try PersistedValues.write(value, object, name) }
    }

    // MARK: Enumerations with raw values

    /// Reads an enumeration stored as its raw value (for code `@Model` writes).
    public func _persistedValue<E: RawRepresentable & Codable>(forKey keyPath: KeyPath<Self, E>, _ name: String) -> E
    where E.RawValue: DeclarableAttributeValue {
        persistentBackingData.read(name, placeholder: nil, remember: true) { object, _ in try PersistedValues.readRaw(object, name, as: E.self) }
    }

    /// Writes an enumeration as its raw value (for code `@Model` writes).
    public func _setPersistedValue<E: RawRepresentable & Codable>(forKey keyPath: KeyPath<Self, E>, _ name: String, to value: E)
    where E.RawValue: DeclarableAttributeValue {
        persistentBackingData.write(name, value, remember: true) { object, _ in try PersistedValues.write(value.rawValue, object, name) }
    }

    /// Reads an optional enumeration stored as its raw value (for code `@Model` writes).
    public func _persistedValue<E: RawRepresentable & Codable>(forKey keyPath: KeyPath<Self, E?>, _ name: String) -> E?
    where E.RawValue: DeclarableAttributeValue {
        persistentBackingData.read(name, placeholder: .some(nil)) { object, _ in try PersistedValues.readRaw(object, name, as: E?.self) }
    }

    /// Writes an optional enumeration as its raw value (for code `@Model` writes).
    public func _setPersistedValue<E: RawRepresentable & Codable>(forKey keyPath: KeyPath<Self, E?>, _ name: String, to value: E?)
    where E.RawValue: DeclarableAttributeValue {
        persistentBackingData.write(name, value) { object, _ in try PersistedValues.write(value?.rawValue, object, name) }
    }

    // MARK: Codable values

    /// Reads a `Codable` value stored as JSON (for code `@Model` writes).
    public func _persistedValue<V: Codable>(forKey keyPath: KeyPath<Self, V>, _ name: String) -> V {
        persistentBackingData.read(name, placeholder: PersistedValues.nilValue(V.self), remember: true) { object, _ in
            try PersistedValues.read(object, name, as: V.self)
        }
    }

    /// Writes a `Codable` value as JSON (for code `@Model` writes).
    public func _setPersistedValue<V: Codable>(forKey keyPath: KeyPath<Self, V>, _ name: String, to value: V) {
        persistentBackingData.write(name, value, remember: true) { object, _ in try PersistedValues.write(value, object, name) }
    }

    // MARK: Relationships

    /// Reads a to-one relationship (for code `@Model` writes).
    public func _persistedValue<D: PersistentModel>(forKey keyPath: KeyPath<Self, D?>, _ name: String) -> D? {
        persistentBackingData.read(name, placeholder: .some(nil)) { object, context in
            try PersistedValues.readToOne(object, name, in: context, as: D.self)
        }
    }

    /// Writes a to-one relationship; a model not inserted yet is inserted into this model's
    /// context (for code `@Model` writes).
    public func _setPersistedValue<D: PersistentModel>(forKey keyPath: KeyPath<Self, D?>, _ name: String, to value: D?) {
        persistentBackingData.write(name, value) { object, context in try PersistedValues.writeToOne(value, object, name, in: context) }
    }

    /// Reads a to-one relationship that is not optional (for code `@Model` writes).
    public func _persistedValue<D: PersistentModel>(forKey keyPath: KeyPath<Self, D>, _ name: String) -> D {
        persistentBackingData.read(name, placeholder: nil, remember: true) { object, context in
            guard let model = try PersistedValues.readToOne(object, name, in: context, as: D.self) else {
                throw SwiftDataError.missingRelationship(entity: object.entityName, property: name)
            }
            return model
        }
    }

    /// Writes a to-one relationship that is not optional (for code `@Model` writes).
    public func _setPersistedValue<D: PersistentModel>(forKey keyPath: KeyPath<Self, D>, _ name: String, to value: D) {
        persistentBackingData.write(name, value, remember: true) { object, context in try PersistedValues.writeToOne(value, object, name, in: context) }
    }

    /// Reads a to-many relationship (for code `@Model` writes).
    public func _persistedValue<D: PersistentModel>(forKey keyPath: KeyPath<Self, [D]>, _ name: String) -> [D] {
        persistentBackingData.read(name, placeholder: []) { object, context in try PersistedValues.readToMany(object, name, in: context, as: D.self) }
    }

    /// Writes a to-many relationship; models not inserted yet are inserted into this model's
    /// context (for code `@Model` writes).
    public func _setPersistedValue<D: PersistentModel>(forKey keyPath: KeyPath<Self, [D]>, _ name: String, to value: [D]) {
        persistentBackingData.write(name, value) { object, context in try PersistedValues.writeToMany(value, object, name, in: context) }
    }

    /// Reads an optional to-many relationship (as CloudKit-ready models declare them): never
    /// `nil` once stored, an empty array when there are no destinations (for code `@Model`
    /// writes).
    public func _persistedValue<D: PersistentModel>(forKey keyPath: KeyPath<Self, [D]?>, _ name: String) -> [D]? {
        persistentBackingData.read(name, placeholder: .some(nil)) { object, context in
            try PersistedValues.readToMany(object, name, in: context, as: D.self)
        }
    }

    /// Writes an optional to-many relationship (`nil` empties it) (for code `@Model` writes).
    public func _setPersistedValue<D: PersistentModel>(forKey keyPath: KeyPath<Self, [D]?>, _ name: String, to value: [D]?) {
        persistentBackingData.write(name, value) { object, context in try PersistedValues.writeToMany(value ?? [], object, name, in: context) }
    }

    // MARK: SwiftData's own accessors

    /// The value of the persisted property at `keyPath` (SwiftData's `getValue(forKey:)`).
    public func getValue<V>(forKey keyPath: KeyPath<Self, V>) -> V { self[keyPath: keyPath] }

    /// Sets the persisted property at `keyPath` (SwiftData's `setValue(forKey:to:)`).
    public func setValue<V>(forKey keyPath: ReferenceWritableKeyPath<Self, V>, to value: V) { self[keyPath: keyPath] = value }
}

extension PersistedValues {
    /// `nil` for an optional type (its JSON `null`); `nil` (no placeholder) for any other.
    static func nilValue<V: Decodable>(_ type: V.Type) -> V? {
        try? JSONDecoder().decode(V.self, from: Data("null".utf8))  // try?: a type that is not optional has no nil; that is the answer
    }
}
