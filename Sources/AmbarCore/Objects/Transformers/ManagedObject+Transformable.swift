import Foundation

extension ManagedObject {
    /// The value of the transformable attribute named `key`, decoded by its registered
    /// ``AttributeTransformer`` (or its raw bytes, when `T` is `Data` and none is registered);
    /// `nil` when the attribute is `nil`.
    ///
    /// - Throws: ``AmbarError/unknownProperty(entity:property:)``, or
    ///   ``AmbarError/transformationFailed(entity:property:transformer:reason:cause:)`` when the bytes
    ///   cannot be decoded as `T`.
    public func transformedValue<T>(forKey key: String, as type: T.Type = T.self) throws(AmbarError) -> T? {
        let attribute = try transformableAttribute(key)
        guard case .data(let data) = try value(forKey: key) else { return nil }
        return try AttributeTransformers.decode(data, attribute, entity: entityName, as: T.self)
    }

    /// Sets the transformable attribute named `key` to the bytes its registered
    /// ``AttributeTransformer`` makes of `value` (`nil` clears it).
    ///
    /// - Throws: ``AmbarError/unknownProperty(entity:property:)``,
    ///   ``AmbarError/transformationFailed(entity:property:transformer:reason:cause:)``, or the errors
    ///   of ``setValue(_:forKey:)-(AttributeValue,_)``.
    public func setTransformedValue<T>(_ value: T?, forKey key: String) throws(AmbarError) {
        let attribute = try transformableAttribute(key)
        guard let value else { return try setValue(AttributeValue.null, forKey: key) }
        try setValue(AttributeValue.data(try AttributeTransformers.encode(value, attribute, entity: entityName)), forKey: key)
    }

    private func transformableAttribute(_ key: String) throws(AmbarError) -> AttributeDescription {
        guard let i = layout.attributeIndex[key] else { throw .unknownProperty(entity: entityName, property: key) }
        let attribute = layout.attributes[i]
        guard attribute.type == .transformable || attribute.type == .binary else {
            throw .typeMismatch(entity: entityName, property: key, expected: attribute.type, got: "transformed")
        }
        return attribute
    }
}

/// Declares a typed transformable attribute of a ``ManagedObject`` subclass in one line:
/// `@Transformed("tags") var tags: [String]?`. Values go through the attribute's registered
/// ``AttributeTransformer``; what cannot be decoded or encoded reads as `nil` or is not applied,
/// and is reported to the context's failure observers.
@propertyWrapper
public struct Transformed<Value> {
    /// The attribute's name in the model.
    public let key: String

    /// Declares the property for the transformable attribute named `key`.
    public init(_ key: String) { self.key = key }

    /// Not available: `@Transformed` works only inside ``ManagedObject`` subclasses.
    @available(*, unavailable, message: "@Transformed is only available on ManagedObject subclasses")
    public var wrappedValue: Value? {
        get { nil }
        set {}
    }

    /// Reads and writes through the enclosing object.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value?>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Transformed<Value>>
    ) -> Value? {
        get {
            let key = object[keyPath: storageKeyPath].key
            do {
                return try object.transformedValue(forKey: key, as: Value.self)
            } catch {
                PropertyLog.failedRead(object, key, error)
                return nil
            }
        }
        set {
            let key = object[keyPath: storageKeyPath].key
            do {
                try object.setTransformedValue(newValue, forKey: key)
            } catch {
                PropertyLog.failedWrite(object, key, error)
            }
        }
    }
}
