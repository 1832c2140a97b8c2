/// How a comparison compares.
public enum ComparisonOperator: String, Sendable, Hashable, Codable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// A text operation of a predicate.
public enum TextOperator: String, Sendable, Hashable, Codable {
    /// The value starts with the pattern.
    case beginsWith
    /// The value contains the pattern.
    case contains
    /// The value ends with the pattern.
    case endsWith
    /// The value matches a wildcard pattern: `*` matches any run of characters, `?` one character,
    /// and `\` makes the next character literal.
    case like
    /// The whole value matches an ICU regular expression (`NSPredicate`'s `MATCHES`). With
    /// ``TextOptions/caseInsensitive`` the expression ignores case; with
    /// ``TextOptions/diacriticInsensitive`` the value's diacritics are removed first. An
    /// expression that does not compile matches nothing.
    case matches
}

/// How a condition on a key path that crosses a to-many relationship applies to its destinations.
public enum Quantifier: String, Sendable, Hashable, Codable {
    /// At least one destination matches (`ANY`, `SOME`; also what a bare key path through a
    /// to-many relationship means).
    case any
    /// Every destination matches (`ALL`); true when there are none.
    case all
    /// No destination matches (`NONE`).
    case none
}

/// Options for text comparisons.
public struct TextOptions: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Compare ignoring case (Unicode case folding, not just ASCII).
    public static let caseInsensitive = TextOptions(rawValue: 1)
    /// Compare ignoring diacritics ("é" matches "e").
    public static let diacriticInsensitive = TextOptions(rawValue: 2)
}

/// A condition on objects, which a store evaluates as SQL and a context evaluates in memory with
/// identical results.
///
/// Build predicates with the typed keys (``Key``, ``ToOneKey``, ``ToManyKey``) and the operators
/// `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||` and `!`:
///
/// ```swift
/// let name = Key<String>("name"), salary = Key<Double>("salary")
/// let p = name.beginsWith("a", options: .caseInsensitive) && salary > 50_000
/// let q = ToManyKey("employees").any(Key<Double>("salary") > 100_000)
/// ```
///
/// Semantics (the same in SQL and in memory): `==` and `!=` treat `nil` as a value (`name != "x"`
/// matches objects whose name is `nil`); ordering comparisons, text operations and `IN` are false
/// when the value is `nil`; text compares Unicode scalars exactly unless options say otherwise.
/// A key path may go through to-one relationships (`"department.name"`).
public indirect enum ObjectPredicate: Sendable, Hashable {
    /// Always true or always false.
    case constant(Bool)
    /// `key op value`.
    case comparison(key: String, op: ComparisonOperator, value: AttributeValue, options: TextOptions)
    /// `key IN values`.
    case isIn(key: String, values: [AttributeValue], options: TextOptions)
    /// `lower <= key <= upper`.
    case between(key: String, lower: AttributeValue, upper: AttributeValue)
    /// A text operation.
    case text(key: String, op: TextOperator, pattern: String, options: TextOptions)
    /// The to-one relationship at `key` points to `target` (or is empty when `target` is nil).
    case relationship(key: String, target: ManagedObjectID?)
    /// The object is one of `ids`.
    case objectIn([ManagedObjectID])
    /// All must hold.
    case and([ObjectPredicate])
    /// At least one must hold.
    case or([ObjectPredicate])
    /// Must not hold.
    case not(ObjectPredicate)
    /// At least one object of the to-many relationship at `key` matches the sub-predicate, which is
    /// written for the destination entity.
    case any(key: String, ObjectPredicate)
    /// The number of objects in the to-many relationship at `key` compares to `count`.
    case count(key: String, op: ComparisonOperator, count: Int)
    /// An aggregate of `attribute` over the to-many relationship at `key` compares to `value`
    /// (`employees.@sum.salary > 100000`; see ``AggregateFunction`` for empty relationships).
    case aggregate(key: String, function: AggregateFunction, attribute: String, op: ComparisonOperator, value: AttributeValue)
    /// The predicate's key paths cross a to-many relationship; it must hold for any, all or none
    /// of the destinations (`ALL employees.salary > 50000`). A key path through a to-many
    /// relationship in any other predicate means ``Quantifier/any``.
    case quantified(Quantifier, ObjectPredicate)

    /// A predicate that every object matches.
    public static var all: ObjectPredicate { .constant(true) }
}

extension ObjectPredicate {
    /// Both must hold.
    public static func && (lhs: ObjectPredicate, rhs: ObjectPredicate) -> ObjectPredicate {
        switch (lhs, rhs) {
        case (.and(let a), .and(let b)): return .and(a + b)
        case (.and(let a), _): return .and(a + [rhs])
        case (_, .and(let b)): return .and([lhs] + b)
        default: return .and([lhs, rhs])
        }
    }

    /// At least one must hold.
    public static func || (lhs: ObjectPredicate, rhs: ObjectPredicate) -> ObjectPredicate {
        switch (lhs, rhs) {
        case (.or(let a), .or(let b)): return .or(a + b)
        case (.or(let a), _): return .or(a + [rhs])
        case (_, .or(let b)): return .or([lhs] + b)
        default: return .or([lhs, rhs])
        }
    }

    /// Must not hold.
    public static prefix func ! (p: ObjectPredicate) -> ObjectPredicate { .not(p) }
}

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
}

extension ObjectPredicate {
    /// Whether `object` matches, evaluated in memory with the same semantics as the store's SQL.
    /// Call it on the object's context queue.
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` or ``AmbarError/unknownProperty(entity:property:)``
    ///   when the predicate does not fit the object's entity.
    public func evaluate(with object: ManagedObject) throws(AmbarError) -> Bool {
        try PredicateEvaluation.evaluate(self, on: object)
    }
}
