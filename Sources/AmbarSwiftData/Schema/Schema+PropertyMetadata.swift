import AmbarStack
import Foundation

extension Schema {
    /// One persisted property of a model class, with the key path that names it: what `@Model`
    /// lists in ``PersistentModel/schemaMetadata`` for each persisted property. The kind of
    /// property follows from its Swift type (see ``Model()``).
    public struct PropertyMetadata: @unchecked Sendable {  // immutable; its closures capture only types and names
        /// The property's name.
        public let name: String
        /// The property's key path.
        public let keypath: AnyKeyPath
        /// The options `@Attribute` and `@Relationship` gave.
        let options: Options
        let kind: Kind
        /// Writes a value of the property's type (given before insertion) into a managed object.
        let writePending: (Any, ManagedObject, ModelContext) throws -> Void
        /// For a persisted `let`: reads it from the model (its value is given by the model's
        /// initializer, not through the backing data).
        let readConstant: ((any PersistentModel) -> Any?)?
        /// For a property whose type has no placeholder: reads it, for a model made for a stored
        /// object (which fails to be made when this throws).
        let materialize: ((ManagedObject, ModelContext) throws -> Any)?
        /// For an attribute: its value of the property's type from a stored value (a tombstone's).
        var restore: ((AttributeValue) -> Any?)? = nil

        enum Kind {
            case attribute(AttributeType, isOptional: Bool, defaultValue: AttributeValue, customClassName: String?)
            case toOne(any PersistentModel.Type, isOptional: Bool)
            case toMany(any PersistentModel.Type, isOptional: Bool)
        }

        struct Options {
            var attributeOptions: [Schema.Attribute.Option]
            var originalName: String?
            var hashModifier: String?
            var relationshipOptions: [Schema.Relationship.Option]
            var deleteRule: Schema.Relationship.DeleteRule
            var minimumModelCount: Int?
            var maximumModelCount: Int?
            var inverse: AnyKeyPath?
            var inverseName: String?

            func has(_ option: Schema.Attribute.Option) -> Bool { attributeOptions.contains(option) }
        }

        /// The model class a relationship leads to.
        var destination: (any PersistentModel.Type)? {
            switch kind {
            case .attribute: return nil
            case .toOne(let type, _), .toMany(let type, _): return type
            }
        }

        /// An attribute of an attribute type.
        public init<Root: PersistentModel, V: DeclarableAttributeValue>(
            _ keyPath: KeyPath<Root, V>, _ name: String, default value: @autoclosure () -> V? = nil,
            attributeOptions: [Schema.Attribute.Option] = [], originalName: String? = nil, hashModifier: String? = nil,
            relationshipOptions: [Schema.Relationship.Option] = [], deleteRule: Schema.Relationship.DeleteRule = .nullify,
            minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, inverse: AnyKeyPath? = nil, inverseName: String? = nil,
            isConstant: Bool = false
        ) {
            self.name = name
            self.keypath = keyPath
            self.options = Options(
                attributeOptions: attributeOptions, originalName: originalName, hashModifier: hashModifier,
                relationshipOptions: relationshipOptions, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
                maximumModelCount: maximumModelCount, inverse: inverse, inverseName: inverseName)
            self.kind = .attribute(V.attributeType, isOptional: V.isOptionalValue, defaultValue: value()?.attributeValue ?? .null, customClassName: nil)
            self.writePending = { value, object, _ in try PersistedValues.write(try cast(value, V.self, name), object, name) }
            self.readConstant = isConstant ? { model in (model as? Root)?[keyPath: keyPath] } : nil
            self.materialize = nil
            self.restore = { V(attributeValue: $0) }
        }

        /// An enumeration stored as its raw value.
        public init<Root: PersistentModel, E: RawRepresentable & Codable>(
            _ keyPath: KeyPath<Root, E>, _ name: String, default value: @autoclosure () -> E? = nil,
            attributeOptions: [Schema.Attribute.Option] = [], originalName: String? = nil, hashModifier: String? = nil,
            relationshipOptions: [Schema.Relationship.Option] = [], deleteRule: Schema.Relationship.DeleteRule = .nullify,
            minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, inverse: AnyKeyPath? = nil, inverseName: String? = nil,
            isConstant: Bool = false
        ) where E.RawValue: DeclarableAttributeValue {
            self.name = name
            self.keypath = keyPath
            self.options = Options(
                attributeOptions: attributeOptions, originalName: originalName, hashModifier: hashModifier,
                relationshipOptions: relationshipOptions, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
                maximumModelCount: maximumModelCount, inverse: inverse, inverseName: inverseName)
            self.kind = .attribute(
                E.RawValue.attributeType, isOptional: E.RawValue.isOptionalValue, defaultValue: value()?.rawValue.attributeValue ?? .null, customClassName: nil)
            self.writePending = { value, object, _ in try PersistedValues.write(try cast(value, E.self, name).rawValue, object, name) }
            self.readConstant = isConstant ? { model in (model as? Root)?[keyPath: keyPath] } : nil
            self.materialize = { object, _ in try PersistedValues.readRaw(object, name, as: E.self) }
            self.restore = { E.RawValue(attributeValue: $0).flatMap(E.init(rawValue:)) }
        }

        /// An optional enumeration stored as its raw value.
        public init<Root: PersistentModel, E: RawRepresentable & Codable>(
            _ keyPath: KeyPath<Root, E?>, _ name: String, default value: @autoclosure () -> E?? = nil,
            attributeOptions: [Schema.Attribute.Option] = [], originalName: String? = nil, hashModifier: String? = nil,
            relationshipOptions: [Schema.Relationship.Option] = [], deleteRule: Schema.Relationship.DeleteRule = .nullify,
            minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, inverse: AnyKeyPath? = nil, inverseName: String? = nil,
            isConstant: Bool = false
        ) where E.RawValue: DeclarableAttributeValue {
            self.name = name
            self.keypath = keyPath
            self.options = Options(
                attributeOptions: attributeOptions, originalName: originalName, hashModifier: hashModifier,
                relationshipOptions: relationshipOptions, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
                maximumModelCount: maximumModelCount, inverse: inverse, inverseName: inverseName)
            self.kind = .attribute(E.RawValue.attributeType, isOptional: true, defaultValue: value()??.rawValue.attributeValue ?? .null, customClassName: nil)
            self.writePending = { value, object, _ in try PersistedValues.write(try cast(value, E?.self, name)?.rawValue, object, name) }
            self.readConstant = isConstant ? { model in (model as? Root)?[keyPath: keyPath] } : nil
            self.materialize = nil
            self.restore = { $0.isNull ? nil : E.RawValue(attributeValue: $0).flatMap(E.init(rawValue:)) }
        }

        /// A `Codable` value stored as JSON.
        public init<Root: PersistentModel, V: Codable>(
            _ keyPath: KeyPath<Root, V>, _ name: String, default value: @autoclosure () -> V? = nil,
            attributeOptions: [Schema.Attribute.Option] = [], originalName: String? = nil, hashModifier: String? = nil,
            relationshipOptions: [Schema.Relationship.Option] = [], deleteRule: Schema.Relationship.DeleteRule = .nullify,
            minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, inverse: AnyKeyPath? = nil, inverseName: String? = nil,
            isConstant: Bool = false
        ) {
            self.name = name
            self.keypath = keyPath
            self.options = Options(
                attributeOptions: attributeOptions, originalName: originalName, hashModifier: hashModifier,
                relationshipOptions: relationshipOptions, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
                maximumModelCount: maximumModelCount, inverse: inverse, inverseName: inverseName)
            self.kind = .attribute(
                .transformable, isOptional: PersistedValues.nilValue(V.self) != nil, defaultValue: PersistedValues.json(value()),
                customClassName: String(describing: V.self))
            self.writePending = { value, object, _ in try PersistedValues.write(try cast(value, V.self, name), object, name) }
            self.readConstant = isConstant ? { model in (model as? Root)?[keyPath: keyPath] } : nil
            self.materialize = PersistedValues.nilValue(V.self) != nil ? nil : { object, _ in try PersistedValues.read(object, name, as: V.self) }
            self.restore = { stored in
                guard case .data(let json) = stored else { return nil }
                return try? JSONDecoder().decode(V.self, from: json)  // try?: a tombstone value that does not decode reads as absent
            }
        }

        /// An optional to-one relationship.
        public init<Root: PersistentModel, D: PersistentModel>(
            _ keyPath: KeyPath<Root, D?>, _ name: String, default value: @autoclosure () -> D?? = nil,
            attributeOptions: [Schema.Attribute.Option] = [], originalName: String? = nil, hashModifier: String? = nil,
            relationshipOptions: [Schema.Relationship.Option] = [], deleteRule: Schema.Relationship.DeleteRule = .nullify,
            minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, inverse: AnyKeyPath? = nil, inverseName: String? = nil,
            isConstant: Bool = false
        ) {
            self.name = name
            self.keypath = keyPath
            self.options = Options(
                attributeOptions: attributeOptions, originalName: originalName, hashModifier: hashModifier,
                relationshipOptions: relationshipOptions, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
                maximumModelCount: maximumModelCount, inverse: inverse, inverseName: inverseName)
            self.kind = .toOne(D.self, isOptional: true)
            self.writePending = { value, object, context in try PersistedValues.writeToOne(try cast(value, D?.self, name), object, name, in: context) }
            self.readConstant = isConstant ? { model in (model as? Root)?[keyPath: keyPath] } : nil
            self.materialize = nil
        }

        /// A to-one relationship that is not optional.
        public init<Root: PersistentModel, D: PersistentModel>(
            _ keyPath: KeyPath<Root, D>, _ name: String, default value: @autoclosure () -> D? = nil,
            attributeOptions: [Schema.Attribute.Option] = [], originalName: String? = nil, hashModifier: String? = nil,
            relationshipOptions: [Schema.Relationship.Option] = [], deleteRule: Schema.Relationship.DeleteRule = .nullify,
            minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, inverse: AnyKeyPath? = nil, inverseName: String? = nil,
            isConstant: Bool = false
        ) {
            self.name = name
            self.keypath = keyPath
            self.options = Options(
                attributeOptions: attributeOptions, originalName: originalName, hashModifier: hashModifier,
                relationshipOptions: relationshipOptions, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
                maximumModelCount: maximumModelCount, inverse: inverse, inverseName: inverseName)
            self.kind = .toOne(D.self, isOptional: false)
            self.writePending = { value, object, context in try PersistedValues.writeToOne(try cast(value, D.self, name), object, name, in: context) }
            self.readConstant = isConstant ? { model in (model as? Root)?[keyPath: keyPath] } : nil
            self.materialize = { object, context in
                guard let model = try PersistedValues.readToOne(object, name, in: context, as: D.self) else {
                    throw SwiftDataError.missingRelationship(entity: object.entityName, property: name)
                }
                return model
            }
        }

        /// A to-many relationship.
        public init<Root: PersistentModel, D: PersistentModel>(
            _ keyPath: KeyPath<Root, [D]>, _ name: String, default value: @autoclosure () -> [D]? = nil,
            attributeOptions: [Schema.Attribute.Option] = [], originalName: String? = nil, hashModifier: String? = nil,
            relationshipOptions: [Schema.Relationship.Option] = [], deleteRule: Schema.Relationship.DeleteRule = .nullify,
            minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, inverse: AnyKeyPath? = nil, inverseName: String? = nil,
            isConstant: Bool = false
        ) {
            self.name = name
            self.keypath = keyPath
            self.options = Options(
                attributeOptions: attributeOptions, originalName: originalName, hashModifier: hashModifier,
                relationshipOptions: relationshipOptions, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
                maximumModelCount: maximumModelCount, inverse: inverse, inverseName: inverseName)
            self.kind = .toMany(D.self, isOptional: false)
            self.writePending = { value, object, context in try PersistedValues.writeToMany(try cast(value, [D].self, name), object, name, in: context) }
            self.readConstant = isConstant ? { model in (model as? Root)?[keyPath: keyPath] } : nil
            self.materialize = nil
        }

        /// An optional to-many relationship (as CloudKit-ready models declare them).
        public init<Root: PersistentModel, D: PersistentModel>(
            _ keyPath: KeyPath<Root, [D]?>, _ name: String, default value: @autoclosure () -> [D]?? = nil,
            attributeOptions: [Schema.Attribute.Option] = [], originalName: String? = nil, hashModifier: String? = nil,
            relationshipOptions: [Schema.Relationship.Option] = [], deleteRule: Schema.Relationship.DeleteRule = .nullify,
            minimumModelCount: Int? = 0, maximumModelCount: Int? = 0, inverse: AnyKeyPath? = nil, inverseName: String? = nil,
            isConstant: Bool = false
        ) {
            self.name = name
            self.keypath = keyPath
            self.options = Options(
                attributeOptions: attributeOptions, originalName: originalName, hashModifier: hashModifier,
                relationshipOptions: relationshipOptions, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
                maximumModelCount: maximumModelCount, inverse: inverse, inverseName: inverseName)
            self.kind = .toMany(D.self, isOptional: true)
            self.writePending = { value, object, context in try PersistedValues.writeToMany(try cast(value, [D]?.self, name) ?? [], object, name, in: context) }
            self.readConstant = isConstant ? { model in (model as? Root)?[keyPath: keyPath] } : nil
            self.materialize = nil
        }
    }
}

/// `value` as the property's type.
private func cast<V>(_ value: Any, _ type: V.Type, _ name: String) throws -> V {
    guard let typed = value as? V else { throw SwiftDataError.typeMismatch(property: name, expected: "\(V.self)", got: "\(Swift.type(of: value))") }
    return typed
}

extension PersistedValues {
    /// The JSON of a `Codable` default value, as the attribute's default.
    static func json<V: Encodable>(_ value: V?) -> AttributeValue {
        guard let value, let data = try? encoder.encode(value) else { return .null }  // try?: a default that cannot be encoded is no default
        return data == Data("null".utf8) ? .null : .data(data)
    }
}
