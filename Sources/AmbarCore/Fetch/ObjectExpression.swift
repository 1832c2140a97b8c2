/// One side of a comparison between two values the object holds
/// (``ObjectPredicate/keyComparison(_:_:_:options:)``): an attribute, a count or an aggregate of
/// a to-many relationship, or an attribute of the object an enclosing `ANY` or `SUBQUERY` ranges
/// from.
///
/// ```swift
/// // dog.name == name, items.@count == quantity, ANY items.price > budget
/// let a = ObjectPredicate.keyComparison(.key("dog.name"), .equal, .key("name"))
/// let b = ObjectPredicate.keyComparison(.count("items"), .equal, .key("quantity"))
/// let c = ToManyKey("items").any(.keyComparison(.key("price"), .greater, .outer("budget")))
/// ```
public indirect enum ObjectExpression: Sendable, Hashable {
    /// An attribute's key path, through to-one relationships (`dog.name`). A key path that
    /// crosses a to-many relationship means *any* destination, as in a comparison with a value.
    case key(String)
    /// The number of objects in the to-many relationship at the key path (`items.@count`).
    case count(String)
    /// An aggregate of an attribute over the to-many relationship at the key path
    /// (`items.@sum.price`; see ``AggregateFunction`` for empty relationships).
    case aggregate(String, AggregateFunction, attribute: String)
    /// An attribute's key path on the object that an enclosing `ANY` (``ObjectPredicate/any(key:_:)``)
    /// or `SUBQUERY` (``ObjectPredicate/subquery(key:_:op:count:)``) ranges from: in
    /// `ANY items.price > budget`, `budget` is the outer object's. `levels` counts enclosing
    /// ranges outwards: 2 is the object the enclosing range's own enclosing range ranges from.
    case outer(String, levels: Int = 1)

    /// The expression read from inside an `ANY` over a relationship of the object it was written
    /// for: its key paths become the outer object's.
    var fromInside: ObjectExpression? {
        switch self {
        case .key(let key): return .outer(key)
        case .outer(let key, let levels): return .outer(key, levels: levels + 1)
        case .count, .aggregate: return nil
        }
    }
}
