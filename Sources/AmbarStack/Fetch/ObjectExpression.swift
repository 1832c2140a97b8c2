/// One side of a comparison between two values the object holds
/// (``ObjectPredicate/keyComparison(_:_:_:options:)``): an attribute, a count or an aggregate of
/// a to-many relationship, or an attribute of the object an enclosing `ANY` ranges from.
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
    /// ranges from: in `ANY items.price > budget`, `budget` is the outer object's.
    case outer(String)

    /// The expression read from inside an `ANY` over a relationship of the object it was written
    /// for: its key paths become the outer object's.
    var fromInside: ObjectExpression? {
        switch self {
        case .key(let key): return .outer(key)
        case .count, .aggregate, .outer: return nil
        }
    }
}
