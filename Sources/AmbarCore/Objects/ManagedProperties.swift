import Logging

/// Declares a typed attribute of a ``ManagedObject`` subclass in one line:
/// `@Managed("name") var name: String`.
///
/// Reading a non-optional property whose stored value is `nil` gives the type's
/// ``AttributeValueConvertible/placeholder`` (the save then fails validation if the attribute is
/// not optional). Writing a value that does not fit the attribute, or writing off the context's
/// queue, is not applied and is logged; use ``ManagedObject/setValue(_:forKey:)-(AttributeValue,_)`` to get the error.
@propertyWrapper
public struct Managed<Value: AttributeValueConvertible> {
    /// The attribute's name in the model.
    public let key: String

    /// Declares the property for the attribute named `key`.
    public init(_ key: String) { self.key = key }

    /// Not available: `@Managed` works only inside ``ManagedObject`` subclasses.
    @available(*, unavailable, message: "@Managed is only available on ManagedObject subclasses")
    public var wrappedValue: Value {
        get { Value.placeholder }
        set {}
    }

    // Inlinable, so that in the declaring module the key path is a literal the optimizer turns
    // into a plain read of the stored wrapper: projecting it at run time was a quarter of an
    // import's time.
    /// Reads and writes through the enclosing object.
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        get {
            Value(attributeValue: object._managedAttribute(object[keyPath: storageKeyPath].key)) ?? Value.placeholder
        }
        set {
            object._setManagedAttribute(object[keyPath: storageKeyPath].key, newValue.attributeValue)
        }
    }
}

/// Declares a typed to-one relationship of a ``ManagedObject`` subclass in one line:
/// `@ToOne("department") var department: Department?`. Setting it keeps the inverse in step.
@propertyWrapper
public struct ToOne<Destination: ManagedObject> {
    /// The relationship's name in the model.
    public let key: String

    /// Declares the property for the to-one relationship named `key`.
    public init(_ key: String) { self.key = key }

    /// Not available: `@ToOne` works only inside ``ManagedObject`` subclasses.
    @available(*, unavailable, message: "@ToOne is only available on ManagedObject subclasses")
    public var wrappedValue: Destination? {
        get { nil }
        set {}
    }

    /// Reads and writes through the enclosing object.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Destination?>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, ToOne<Destination>>
    ) -> Destination? {
        get {
            let key = object[keyPath: storageKeyPath].key
            do {
                return try object.object(forKey: key) as? Destination
            } catch {
                PropertyLog.failedRead(object, key, error)
                return nil
            }
        }
        set {
            let key = object[keyPath: storageKeyPath].key
            do {
                try object.setObject(newValue, forKey: key)
            } catch {
                PropertyLog.failedWrite(object, key, error)
            }
        }
    }
}

/// Declares a typed to-many relationship of a ``ManagedObject`` subclass in one line:
/// `@ToMany("employees") var employees: Set<Employee>`. Assigning a set adds and removes the
/// difference, keeping inverses in step.
@propertyWrapper
public struct ToMany<Destination: ManagedObject> {
    /// The relationship's name in the model.
    public let key: String

    /// Declares the property for the to-many relationship named `key`.
    public init(_ key: String) { self.key = key }

    /// Not available: `@ToMany` works only inside ``ManagedObject`` subclasses.
    @available(*, unavailable, message: "@ToMany is only available on ManagedObject subclasses")
    public var wrappedValue: Set<Destination> {
        get { [] }
        set {}
    }

    /// Reads and writes through the enclosing object.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Set<Destination>>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, ToMany<Destination>>
    ) -> Set<Destination> {
        get {
            let key = object[keyPath: storageKeyPath].key
            do {
                return Set(try object.objects(forKey: key).compactMap { $0 as? Destination })
            } catch {
                PropertyLog.failedRead(object, key, error)
                return []
            }
        }
        set {
            let key = object[keyPath: storageKeyPath].key
            do {
                try object.setObjects(Set(newValue.map { $0 as ManagedObject }), forKey: key)
            } catch {
                PropertyLog.failedWrite(object, key, error)
            }
        }
    }
}

/// Reports what typed properties, which cannot throw, could not do: to the object's context's
/// failure observers (``ManagedObjectContext/observeFailures(_:)``) and the log.
enum PropertyLog {
    static let logger = Logger(label: "ambar.stack.properties")

    static func unknown(_ object: ManagedObject, _ key: String) {
        post(object, "read a typed property", key, .unknownProperty(entity: object.entityName, property: key))
    }

    static func failedRead(_ object: ManagedObject, _ key: String, _ error: AmbarError) {
        post(object, "read a typed property", key, error)
    }

    static func failedWrite(_ object: ManagedObject, _ key: String, _ error: AmbarError) {
        post(object, "write a typed property (the value was not applied)", key, error)
    }

    private static func post(_ object: ManagedObject, _ operation: String, _ key: String, _ error: AmbarError) {
        let failure = ContextFailure(operation: operation, object: object.objectID, property: key, error: error)
        if let context = object.managedObjectContext {
            context.report(failure)
        } else {
            logger.error("\(failure)")
        }
    }
}

extension ManagedObject {
    /// The value of the attribute `key`, for `@Managed`; `.null`, logged, when the entity has no
    /// such attribute.
    @usableFromInline
    final func _managedAttribute(_ key: String) -> AttributeValue {
        guard let i = layout.attributeSlot(key) else {
            PropertyLog.unknown(self, key)
            return .null
        }
        return attribute(at: i)
    }

    /// Sets the attribute `key`, for `@Managed`; a value that does not fit, an unknown key or a
    /// write off the context's queue is not applied and is logged.
    @usableFromInline
    final func _setManagedAttribute(_ key: String, _ value: AttributeValue) {
        do throws(AmbarError) {
            guard let i = layout.attributeSlot(key) else {
                throw AmbarError.unknownProperty(entity: entityName, property: key)
            }
            try setAttribute(value, at: i)
        } catch {
            PropertyLog.failedWrite(self, key, error)
        }
    }
}
