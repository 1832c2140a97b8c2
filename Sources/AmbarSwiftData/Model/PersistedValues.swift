import AmbarStack
import Foundation

/// How each kind of persisted property is read from and written to the managed object a model
/// stands for. Each kind follows from the property's Swift type, chosen by the compiler among
/// the overloads of ``PersistentModel`` and ``Schema/PropertyMetadata``:
///
/// - an attribute type (`String`, `Int`, `Date`, `UUID`, …, and their optionals): an attribute
///   of that type;
/// - an enumeration with raw values of an attribute type: an attribute of the raw type;
/// - any other `Codable` value (structs, enumerations with associated values, arrays and
///   dictionaries of them): its JSON;
/// - a model, an optional model, an array of models: a relationship.
enum PersistedValues {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    // MARK: Attributes

    static func read<V: DeclarableAttributeValue>(_ object: ManagedObject, _ name: String, as type: V.Type) throws(AmbarError) -> V {
        let stored = try object.value(forKey: name)
        guard let value = V(attributeValue: stored) else {
            throw AmbarError.typeMismatch(entity: object.entityName, property: name, expected: V.attributeType, got: stored.kindName)
        }
        return value
    }

    static func write<V: DeclarableAttributeValue>(_ value: V, _ object: ManagedObject, _ name: String) throws(AmbarError) {
        try object.setValue(value.attributeValue, forKey: name)
    }

    // MARK: Enumerations with raw values

    static func readRaw<E: RawRepresentable>(_ object: ManagedObject, _ name: String, as type: E.Type) throws(AmbarError) -> E
    where E.RawValue: DeclarableAttributeValue {
        let raw = try read(object, name, as: E.RawValue.self)
        guard let value = E(rawValue: raw) else {
            throw AmbarError.transformationFailed(
                entity: object.entityName, property: name, transformer: "\(E.self)(rawValue:)", reason: "\(raw) is not a case of \(E.self)")
        }
        return value
    }

    static func readRaw<E: RawRepresentable>(_ object: ManagedObject, _ name: String, as type: E?.Type) throws(AmbarError) -> E?
    where E.RawValue: DeclarableAttributeValue {
        if try object.value(forKey: name).isNull { return nil }
        return try readRaw(object, name, as: E.self)
    }

    // MARK: Codable values

    static func read<V: Decodable>(_ object: ManagedObject, _ name: String, as type: V.Type) throws(AmbarError) -> V {
        let data: Data
        switch try object.value(forKey: name) {
        case .data(let stored): data = stored
        case .null: data = Data("null".utf8)
        case let other: throw AmbarError.typeMismatch(entity: object.entityName, property: name, expected: .transformable, got: other.kindName)
        }
        do {
            return try JSONDecoder().decode(V.self, from: data)
        } catch {
            throw AmbarError.transformationFailed(entity: object.entityName, property: name, transformer: "JSON", reason: "\(error)", cause: ErrorCause(error))
        }
    }

    static func write<V: Encodable>(_ value: V, _ object: ManagedObject, _ name: String) throws(AmbarError) {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw AmbarError.transformationFailed(entity: object.entityName, property: name, transformer: "JSON", reason: "\(error)", cause: ErrorCause(error))
        }
        // nil is stored as NULL, not as the JSON `null`, so that predicates see it as nil.
        try object.setValue(data == Data("null".utf8) ? .null : .data(data), forKey: name)
    }

    // MARK: Relationships

    static func readToOne<D: PersistentModel>(_ object: ManagedObject, _ name: String, in context: ModelContext, as type: D.Type) throws -> D? {
        guard let destination = try object.object(forKey: name) else { return nil }
        return try context.model(for: destination, as: D.self)
    }

    static func readToMany<D: PersistentModel>(_ object: ManagedObject, _ name: String, in context: ModelContext, as type: D.Type) throws -> [D] {
        try object._declaredGet(name, [ManagedObject].self).map { destination in try context.model(for: destination, as: D.self) }
    }

    static func writeToOne<D: PersistentModel>(_ value: D?, _ object: ManagedObject, _ name: String, in context: ModelContext) throws {
        guard let value else { return try object.setObject(nil, forKey: name) }
        try object.setObject(try context.managedObject(inserting: value), forKey: name)
    }

    static func writeToMany<D: PersistentModel>(_ value: [D], _ object: ManagedObject, _ name: String, in context: ModelContext) throws {
        var destinations: [ManagedObject] = []
        for model in value { destinations.append(try context.managedObject(inserting: model)) }
        try object.setObjects(Set(destinations), forKey: name)
    }
}
