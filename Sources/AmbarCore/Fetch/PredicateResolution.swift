/// Gives a predicate its meaning against an entity where the key paths alone do not say it, the
/// same way for SQL and for in-memory evaluation:
///
/// - a key path that crosses a to-many relationship (`books.title == "Dune"`) means *any*
///   destination (`.any(key: "books", title == "Dune")`), as in Core Data;
/// - ``ObjectPredicate/quantified(_:_:)`` splits its key path at the to-many relationship into
///   `ANY`, `ALL` (no destination fails) or `NONE`;
/// - `== nil` / `!= nil` on a to-one relationship tests whether it is empty.
package enum PredicateResolution {
    /// The predicate to evaluate instead of `predicate` on objects of `layout`, or `nil` when it
    /// means what it says.
    package static func rewrite(_ predicate: ObjectPredicate, layout: EntityLayout, lookup: (String) -> EntityLayout?) throws(AmbarError) -> ObjectPredicate? {
        switch predicate {
        case .quantified(let quantifier, .keyComparison(let lhs, let op, let rhs, let options)):
            let inner = ObjectPredicate.keyComparison(lhs, op, rhs, options: options)
            guard let (relationship, rest) = try splitComparison(lhs, op, rhs, options, layout: layout, lookup: lookup) else {
                switch quantifier {
                case .any, .all: return inner
                case .none: return .not(inner)
                }
            }
            switch quantifier {
            case .any: return .any(key: relationship, rest)
            case .all: return .not(.any(key: relationship, .not(rest)))
            case .none: return .not(.any(key: relationship, rest))
            }
        case .keyComparison(let lhs, let op, let rhs, let options):
            guard let (relationship, rest) = try splitComparison(lhs, op, rhs, options, layout: layout, lookup: lookup) else { return nil }
            return .any(key: relationship, rest)
        case .quantified(let quantifier, let inner):
            guard let key = inner.leafKey else {
                throw .invalidPredicate("\(quantifier.rawValue.uppercased()) applies to one comparison on a key path, not to \(inner)")
            }
            guard let split = split(key, of: inner, layout: layout, lookup: lookup) else {
                // No to-many relationship on the way: the condition applies to the one value.
                switch quantifier {
                case .any, .all: return inner
                case .none: return .not(inner)
                }
            }
            switch quantifier {
            case .any: return .any(key: split.relationship, split.rest)
            case .all: return .not(.any(key: split.relationship, .not(split.rest)))
            case .none: return .not(.any(key: split.relationship, split.rest))
            }
        case .comparison(let key, let op, .null, _) where op == .equal || op == .notEqual:
            if let (holder, last) = holderLayout(key, layout: layout, lookup: lookup),
                let i = holder.relationshipIndex[last], !holder.relationships[i].isToMany
            {
                return op == .equal ? .relationship(key: key, target: nil) : .not(.relationship(key: key, target: nil))
            }
            fallthrough
        default:
            guard let key = predicate.leafKey, key.contains(".") else { return nil }
            guard let split = split(key, of: predicate, layout: layout, lookup: lookup) else { return nil }
            return .any(key: split.relationship, split.rest)
        }
    }

    /// A key-path comparison one of whose key paths crosses a to-many relationship, as the
    /// relationship and the comparison for its destinations (the other side read from the outer
    /// object); nil when neither side crosses one.
    private static func splitComparison(
        _ lhs: ObjectExpression, _ op: ComparisonOperator, _ rhs: ObjectExpression, _ options: TextOptions, layout: EntityLayout,
        lookup: (String) -> EntityLayout?
    ) throws(AmbarError) -> (String, ObjectPredicate)? {
        func crossing(_ expression: ObjectExpression) -> (relationship: String, rest: String)? {
            guard case .key(let key) = expression, key.contains(".") else { return nil }
            return splitPath(key, layout: layout, lookup: lookup)
        }
        let description = ObjectPredicate.keyComparison(lhs, op, rhs, options: options)
        switch (crossing(lhs), crossing(rhs)) {
        case (nil, nil):
            return nil
        case (.some, .some):
            throw .invalidPredicate(
                "both sides of \(description) cross a to-many relationship; compare one of them with a value, or use SUBQUERY")
        case (.some(let split), nil):
            guard let outside = rhs.fromInside else {
                throw .invalidPredicate("in \(description), the other side of a key path through a to-many relationship must be an attribute")
            }
            return (split.relationship, .keyComparison(.key(split.rest), op, outside, options: options))
        case (nil, .some(let split)):
            guard let outside = lhs.fromInside else {
                throw .invalidPredicate("in \(description), the other side of a key path through a to-many relationship must be an attribute")
            }
            return (split.relationship, .keyComparison(outside, op, .key(split.rest), options: options))
        }
    }

    /// `key` cut after its first to-many relationship, when it crosses one before its end.
    private static func splitPath(_ key: String, layout: EntityLayout, lookup: (String) -> EntityLayout?) -> (relationship: String, rest: String)? {
        let parts = key.split(separator: ".").map(String.init)
        var current = layout
        for (n, name) in parts.dropLast().enumerated() {
            guard let i = current.relationshipIndex[name] else { return nil }
            let relationship = current.relationships[i]
            if relationship.isToMany { return (parts[...n].joined(separator: "."), parts[(n + 1)...].joined(separator: ".")) }
            guard let next = lookup(relationship.description.destination) else { return nil }
            current = next
        }
        return nil
    }

    /// `key` cut after its first to-many relationship (when it has one before its end): the
    /// relationship's path, and `leaf` rewritten for the destination entity.
    private static func split(_ key: String, of leaf: ObjectPredicate, layout: EntityLayout, lookup: (String) -> EntityLayout?) -> (
        relationship: String, rest: ObjectPredicate
    )? {
        guard let split = splitPath(key, layout: layout, lookup: lookup) else { return nil }
        return (split.relationship, leaf.replacingLeafKey(with: split.rest))
    }

    /// The layout holding the last component of `key`, following to-one relationships.
    private static func holderLayout(_ key: String, layout: EntityLayout, lookup: (String) -> EntityLayout?) -> (EntityLayout, String)? {
        let parts = key.split(separator: ".").map(String.init)
        guard let last = parts.last else { return nil }
        var current = layout
        for name in parts.dropLast() {
            guard let i = current.relationshipIndex[name], !current.relationships[i].isToMany,
                let next = lookup(current.relationships[i].description.destination)
            else { return nil }
            current = next
        }
        return (current, last)
    }
}

extension ObjectPredicate {
    /// The key path of a predicate on one key path (a comparison, a text operation…).
    var leafKey: String? {
        switch self {
        case .comparison(let key, _, _, _), .isIn(let key, _, _), .between(let key, _, _), .text(let key, _, _, _),
            .relationship(let key, _), .any(let key, _), .count(let key, _, _), .aggregate(let key, _, _, _, _):
            return key
        case .constant, .objectIn, .and, .or, .not, .quantified, .keyComparison, .subquery, .enclosing:
            return nil
        }
    }

    /// The same predicate on another key path.
    func replacingLeafKey(with key: String) -> ObjectPredicate {
        switch self {
        case .comparison(_, let op, let value, let options): return .comparison(key: key, op: op, value: value, options: options)
        case .isIn(_, let values, let options): return .isIn(key: key, values: values, options: options)
        case .between(_, let lower, let upper): return .between(key: key, lower: lower, upper: upper)
        case .text(_, let op, let pattern, let options): return .text(key: key, op: op, pattern: pattern, options: options)
        case .relationship(_, let target): return .relationship(key: key, target: target)
        case .any(_, let sub): return .any(key: key, sub)
        case .count(_, let op, let count): return .count(key: key, op: op, count: count)
        case .aggregate(_, let function, let attribute, let op, let value):
            return .aggregate(key: key, function: function, attribute: attribute, op: op, value: value)
        case .constant, .objectIn, .and, .or, .not, .quantified, .keyComparison, .subquery, .enclosing: return self
        }
    }
}
