/// A typed key path to an attribute, for building predicates and sort descriptors.
public struct Key<Value: AttributeValueConvertible>: Sendable, Hashable {
    /// The key path: an attribute name, optionally behind to-one relationships (`"department.name"`).
    public let path: String

    /// A key for the attribute at `path`.
    public init(_ path: String) { self.path = path }

    /// `self == value`, comparing text with `options`.
    public func equals(_ value: Value, options: TextOptions) -> ObjectPredicate {
        .comparison(key: path, op: .equal, value: value.attributeValue, options: options)
    }

    /// `self IN values`.
    public func isIn(_ values: [Value], options: TextOptions = []) -> ObjectPredicate {
        .isIn(key: path, values: values.map(\.attributeValue), options: options)
    }

    /// `lower <= self <= upper`.
    public func between(_ lower: Value, and upper: Value) -> ObjectPredicate {
        .between(key: path, lower: lower.attributeValue, upper: upper.attributeValue)
    }

    /// The attribute is `nil`.
    public var isNil: ObjectPredicate { .comparison(key: path, op: .equal, value: .null, options: []) }
    /// The attribute is not `nil`.
    public var isNotNil: ObjectPredicate { .comparison(key: path, op: .notEqual, value: .null, options: []) }

    /// `self op other`: two attributes of the object compared (`Key<Int>("stock") < Key<Int>("reorderLevel")`),
    /// as numbers or as values of one type; see ``ObjectPredicate/keyComparison(_:_:_:options:)``.
    public func compared<Other>(_ op: ComparisonOperator, with other: Key<Other>, options: TextOptions = []) -> ObjectPredicate {
        .keyComparison(.key(path), op, .key(other.path), options: options)
    }

    /// `self == other`, comparing text with `options`.
    public func equals<Other>(_ other: Key<Other>, options: TextOptions = []) -> ObjectPredicate {
        compared(.equal, with: other, options: options)
    }

    /// An ascending or descending sort on this key.
    public func sorted(ascending: Bool = true, options: TextOptions = []) -> ObjectSortDescriptor {
        ObjectSortDescriptor(key: path, ascending: ascending, options: options)
    }

    public static func == (key: Key, value: Value) -> ObjectPredicate {
        .comparison(key: key.path, op: .equal, value: value.attributeValue, options: [])
    }
    public static func != (key: Key, value: Value) -> ObjectPredicate {
        .comparison(key: key.path, op: .notEqual, value: value.attributeValue, options: [])
    }
    public static func < (key: Key, value: Value) -> ObjectPredicate {
        .comparison(key: key.path, op: .less, value: value.attributeValue, options: [])
    }
    public static func <= (key: Key, value: Value) -> ObjectPredicate {
        .comparison(key: key.path, op: .lessOrEqual, value: value.attributeValue, options: [])
    }
    public static func > (key: Key, value: Value) -> ObjectPredicate {
        .comparison(key: key.path, op: .greater, value: value.attributeValue, options: [])
    }
    public static func >= (key: Key, value: Value) -> ObjectPredicate {
        .comparison(key: key.path, op: .greaterOrEqual, value: value.attributeValue, options: [])
    }

    // `==` and `!=` between two keys are `equals(_:options:)` and `compared(_:with:options:)`:
    // `Key` is itself `Equatable`, so `==` of two keys is already a `Bool`.

    /// The attribute at `key` is less than the one at `other` (`Key<Int>("stock") < Key<Int>("reorderLevel")`).
    public static func < <Other>(key: Key, other: Key<Other>) -> ObjectPredicate { key.compared(.less, with: other) }
    /// The attribute at `key` is at most the one at `other`.
    public static func <= <Other>(key: Key, other: Key<Other>) -> ObjectPredicate { key.compared(.lessOrEqual, with: other) }
    /// The attribute at `key` is greater than the one at `other` (`Key<Double>("price") > Key<Double>("budget")`).
    public static func > <Other>(key: Key, other: Key<Other>) -> ObjectPredicate { key.compared(.greater, with: other) }
    /// The attribute at `key` is at least the one at `other`.
    public static func >= <Other>(key: Key, other: Key<Other>) -> ObjectPredicate { key.compared(.greaterOrEqual, with: other) }
}

/// Attribute types that text operations apply to: `String` and `String?`.
public protocol TextAttributeValue: AttributeValueConvertible {}

extension String: TextAttributeValue {}

extension Optional: TextAttributeValue where Wrapped == String {}

extension Key where Value: TextAttributeValue {
    /// The text begins with `prefix` (false when `nil`).
    public func beginsWith(_ prefix: String, options: TextOptions = []) -> ObjectPredicate {
        .text(key: path, op: .beginsWith, pattern: prefix, options: options)
    }
    /// The text contains `part` (false when `nil`).
    public func contains(_ part: String, options: TextOptions = []) -> ObjectPredicate {
        .text(key: path, op: .contains, pattern: part, options: options)
    }
    /// The text ends with `suffix` (false when `nil`).
    public func endsWith(_ suffix: String, options: TextOptions = []) -> ObjectPredicate {
        .text(key: path, op: .endsWith, pattern: suffix, options: options)
    }
    /// The text matches `pattern` (`*` any run, `?` one character, `\` escapes; false when `nil`).
    public func like(_ pattern: String, options: TextOptions = []) -> ObjectPredicate {
        .text(key: path, op: .like, pattern: pattern, options: options)
    }
}

/// A typed key path to a to-one relationship.
public struct ToOneKey: Sendable, Hashable {
    /// The key path of the relationship.
    public let path: String
    /// A key for the to-one relationship at `path`.
    public init(_ path: String) { self.path = path }

    /// The relationship points to the object with `id` (or is empty when `id` is nil).
    public static func == (key: ToOneKey, id: ManagedObjectID?) -> ObjectPredicate {
        .relationship(key: key.path, target: id)
    }
    /// The relationship does not point to the object with `id`.
    public static func != (key: ToOneKey, id: ManagedObjectID?) -> ObjectPredicate {
        .not(.relationship(key: key.path, target: id))
    }
}

/// A typed key path to a to-many relationship, for `ANY` and count predicates.
public struct ToManyKey: Sendable, Hashable {
    /// The key path of the relationship.
    public let path: String
    /// A key for the to-many relationship at `path`.
    public init(_ path: String) { self.path = path }

    /// At least one destination matches `predicate` (written for the destination entity).
    public func any(_ predicate: ObjectPredicate) -> ObjectPredicate { .any(key: path, predicate) }
    /// No destination matches `predicate`.
    public func none(_ predicate: ObjectPredicate) -> ObjectPredicate { .not(.any(key: path, predicate)) }
    /// The relationship's size compared to `count`.
    public func count(_ op: ComparisonOperator, _ count: Int) -> ObjectPredicate {
        .count(key: path, op: op, count: count)
    }
    /// The number of destinations that match `predicate` (written for the destination entity)
    /// compared to `count`: `SUBQUERY(path, $x, predicate).@count op count`.
    ///
    /// ```swift
    /// // Orders with at least two lines dearer than 10 and than the order's own budget.
    /// let p = ToManyKey("items").count(
    ///     where: Key<Double>("price") > 10 && .keyComparison(.key("price"), .greater, .outer("budget")),
    ///     .greaterOrEqual, 2)
    /// ```
    public func count(where predicate: ObjectPredicate, _ op: ComparisonOperator, _ count: Int) -> ObjectPredicate {
        .subquery(key: path, predicate, op: op, count: count)
    }
}
