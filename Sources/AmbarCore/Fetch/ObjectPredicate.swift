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
    /// Two values of the object compared (`dog.name == name`, `items.@count == quantity`): both
    /// sides must be of comparable types (numbers with numbers, text with text, dates with
    /// dates…). `==` and `!=` treat `nil` as a value, as a comparison with a value does; the
    /// other operators are false when either side is `nil`.
    case keyComparison(ObjectExpression, ComparisonOperator, ObjectExpression, options: TextOptions = [])
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
    /// `SUBQUERY(key, $x, predicate).@count op count`: the number of objects of the to-many
    /// relationship at `key` that match `predicate` compares to `count`. `predicate` is written for
    /// the destination entity, as in ``any(key:_:)``; inside it, ``enclosing(_:)`` and
    /// ``ObjectExpression/outer(_:levels:)`` read the object the relationship belongs to.
    ///
    /// ```swift
    /// // SUBQUERY(items, $i, $i.price > 10 AND $i.price > budget).@count >= 2
    /// let p = ObjectPredicate.subquery(
    ///     key: "items", Key<Double>("price") > 10 && .keyComparison(.key("price"), .greater, .outer("budget")),
    ///     op: .greaterOrEqual, count: 2)
    /// ```
    case subquery(key: String, ObjectPredicate, op: ComparisonOperator, count: Int)
    /// The predicate holds for the object that the innermost enclosing ``any(key:_:)`` or
    /// ``subquery(key:_:op:count:)`` ranges from (`SUBQUERY(items, $i, $i.price > 5 AND rush == YES)`
    /// reads `rush` on the order). Outside any range it is an error.
    case enclosing(ObjectPredicate)

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
