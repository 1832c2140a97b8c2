import Foundation

// The `#Predicate` expressions that have an equivalent in a store query, each compiled to the
// ObjectPredicate a `Key` builder would make.

extension PredicateExpressions.Variable: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        guard let path = compilation.variables[key] else {
            throw .invalidPredicate("a #Predicate variable of type \(Output.self) that stands for no object of the query")
        }
        return .property(path, PropertyKind.of(Output.self))
    }
}

extension PredicateExpressions.KeyPath: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        let compiledRoot = try compilation.compile(root)
        if case .filtered(let key, let test) = compiledRoot {
            // items.filter { … }.count and .isEmpty: SUBQUERY(items, $x, …).@count.
            if Output.self == Int.self { return .filteredCount(key, test) }
            if Output.self == Bool.self { return .condition(.subquery(key: key, test, op: .equal, count: 0)) }
            throw .invalidPredicate("\(keyPath): of a filtered to-many relationship a #Predicate can test count and isEmpty")
        }
        guard case .property(let prefix, let kind) = compiledRoot else {
            throw .invalidPredicate("\(keyPath) must start at the object the #Predicate tests")
        }
        if kind == .toMany {
            // Of a set or an array of objects, the Int property a #Predicate reads is its count,
            // the Bool one isEmpty.
            if Output.self == Int.self { return .count(prefix) }
            if Output.self == Bool.self { return .condition(.count(key: prefix, op: .equal, count: 0)) }
            throw .invalidPredicate(
                "\(keyPath): of a to-many relationship a #Predicate can test count, isEmpty, contains, contains(where:), allSatisfy and filter { … }.count")
        }
        let name = try PredicateCompilation.propertyName(keyPath, on: Root.Output.self)
        return .property(prefix.isEmpty ? name : "\(prefix).\(name)", PropertyKind.of(Output.self))
    }
}

extension PredicateExpressions.Value: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        try CompiledExpression.fromValue(value)
    }
}

extension PredicateExpressions.Equal: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        .condition(try PredicateCompilation.compare(try compilation.compile(lhs), .equal, try compilation.compile(rhs)))
    }
}

extension PredicateExpressions.NotEqual: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        .condition(try PredicateCompilation.compare(try compilation.compile(lhs), .notEqual, try compilation.compile(rhs)))
    }
}

extension PredicateExpressions.Comparison: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        let op: ComparisonOperator =
            switch self.op {
            case .lessThan: .less
            case .lessThanOrEqual: .lessOrEqual
            case .greaterThan: .greater
            case .greaterThanOrEqual: .greaterOrEqual
            }
        return .condition(try PredicateCompilation.compare(try compilation.compile(lhs), op, try compilation.compile(rhs)))
    }
}

extension PredicateExpressions.Conjunction: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        .condition(try compilation.condition(lhs) && compilation.condition(rhs))
    }
}

extension PredicateExpressions.Disjunction: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        .condition(try compilation.condition(lhs) || compilation.condition(rhs))
    }
}

extension PredicateExpressions.Negation: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        .condition(.not(try compilation.condition(wrapped)))
    }
}

extension PredicateExpressions.OptionalFlatMap: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        // `$0.project?.name`: the closure's variable stands for the to-one destination.
        guard case .property(let path, .toOne) = try compilation.compile(wrapped) else {
            throw .invalidPredicate("optional chaining in a #Predicate must go through a to-one relationship of a declared class")
        }
        compilation.variables[variable.key] = path
        return try compilation.compile(transform)
    }
}

extension PredicateExpressions.ForcedUnwrap: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        try compilation.compile(inner)
    }
}

extension PredicateExpressions.CollectionContainsCollection: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        try PredicateCompilation.text(try compilation.compile(base), .contains, try compilation.compile(other), options: [])
    }
}

extension PredicateExpressions.SequenceStartsWith: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        try PredicateCompilation.text(try compilation.compile(base), .beginsWith, try compilation.compile(prefix), options: [])
    }
}

extension PredicateExpressions.SequenceContains: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        switch (try compilation.compile(sequence), try compilation.compile(element)) {
        case (.constants(let values), .property(let key, .attribute)):
            return .condition(.isIn(key: key, values: values, options: []))
        case (.property(let key, .toMany), .object(let id?)):
            return .condition(.any(key: key, .objectIn([id])))
        case (let s, let e):
            throw .invalidPredicate(
                "contains in a #Predicate tests a property against a list of values, or a to-many relationship for an object; not \(s) for \(e)")
        }
    }
}

extension PredicateExpressions.SequenceContainsWhere: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        let (key, test) = try PredicateCompilation.toManyTest(sequence, variable.key, self.test, &compilation)
        return .condition(.any(key: key, test))
    }
}

extension PredicateExpressions.Filter: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        let (key, test) = try PredicateCompilation.toManyTest(sequence, variable.key, filter, &compilation)
        return .filtered(key, test)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        // Every destination matches: none fails (true for none at all, as in Swift).
        let (key, test) = try PredicateCompilation.toManyTest(sequence, variable.key, self.test, &compilation)
        return .condition(.not(.any(key: key, .not(test))))
    }
}

extension PredicateExpressions.RangeExpressionContains: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        guard case .range(let lower, let upper, let closed) = try compilation.compile(range),
            case .property(let key, .attribute) = try compilation.compile(element)
        else {
            throw .invalidPredicate("a range in a #Predicate must be made of values and test a property")
        }
        if closed { return .condition(.between(key: key, lower: lower, upper: upper)) }
        return .condition(
            .comparison(key: key, op: .greaterOrEqual, value: lower, options: [])
                && .comparison(key: key, op: .less, value: upper, options: []))
    }
}

extension PredicateExpressions.ClosedRange: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        guard case .constant(let l) = try compilation.compile(lower), case .constant(let u) = try compilation.compile(upper) else {
            throw .invalidPredicate("the bounds of a range in a #Predicate must be values, not properties")
        }
        return .range(lower: l, upper: u, closed: true)
    }
}

extension PredicateExpressions.Range: ObjectPredicateCompilable {
    func compile(_ compilation: inout PredicateCompilation) throws(AmbarError) -> CompiledExpression {
        guard case .constant(let l) = try compilation.compile(lower), case .constant(let u) = try compilation.compile(upper) else {
            throw .invalidPredicate("the bounds of a range in a #Predicate must be values, not properties")
        }
        return .range(lower: l, upper: u, closed: false)
    }
}

extension PredicateCompilation {
    /// `lhs op rhs`, with the property on either side.
    static func compare(_ lhs: CompiledExpression, _ op: ComparisonOperator, _ rhs: CompiledExpression) throws(AmbarError) -> ObjectPredicate {
        switch (lhs, rhs) {
        case (.property(let key, .attribute), .constant(let value)):
            return .comparison(key: key, op: op, value: value, options: [])
        case (.constant, .property):
            return try compare(rhs, op.mirrored, lhs)
        case (.property("", _), .object(let id)) where op == .equal || op == .notEqual:
            // The object itself.
            let same: ObjectPredicate = id.map { .objectIn([$0]) } ?? .constant(false)
            return op == .equal ? same : .not(same)
        case (.property(let key, .toOne), .object(let target)) where op == .equal || op == .notEqual:
            let same = ObjectPredicate.relationship(key: key, target: target)
            return op == .equal ? same : .not(same)
        case (.property(let key, .toOne), .constant(.null)) where op == .equal || op == .notEqual:
            let same = ObjectPredicate.relationship(key: key, target: nil)
            return op == .equal ? same : .not(same)
        case (.object, .property):
            return try compare(rhs, op, lhs)
        case (.count(let key), .constant(.integer(let n))):
            return .count(key: key, op: op, count: Int(n))
        case (.filteredCount(let key, let test), .constant(.integer(let n))):
            return .subquery(key: key, test, op: op, count: Int(n))
        case (.constant, .count), (.constant, .filteredCount):
            return try compare(rhs, op.mirrored, lhs)
        case (.property(let a, .attribute), .property(let b, .attribute)):
            return .keyComparison(.key(a), op, .key(b))
        case (.count(let a), .property(let b, .attribute)):
            return .keyComparison(.count(a), op, .key(b))
        case (.property(let a, .attribute), .count(let b)):
            return .keyComparison(.key(a), op, .count(b))
        case (.count(let a), .count(let b)):
            return .keyComparison(.count(a), op, .count(b))
        case (.constant(let a), .constant(let b)):
            return .constant(PredicateEvaluation.compare(a, op, b, a.isNull ? .string : Self.attributeType(of: a), []))
        default:
            throw .invalidPredicate("a #Predicate can compare a property with a value or with another property, not \(lhs) with \(rhs)")
        }
    }

    /// A text operation of a property with a value.
    static func text(_ value: CompiledExpression, _ op: TextOperator, _ pattern: CompiledExpression, options: TextOptions) throws(AmbarError)
        -> CompiledExpression
    {
        guard case .property(let key, .attribute) = value, case .constant(.string(let text)) = pattern else {
            throw .invalidPredicate("a text test in a #Predicate needs a string property and a string value, not \(value) and \(pattern)")
        }
        return .condition(.text(key: key, op: op, pattern: text, options: options))
    }

    /// The relationship a `contains(where:)`, `allSatisfy` or `filter` goes through, and its test,
    /// written for the destination entity.
    static func toManyTest(
        _ sequence: Any, _ variable: PredicateExpressions.VariableID, _ test: Any,
        _ compilation: inout PredicateCompilation
    ) throws(AmbarError) -> (String, ObjectPredicate) {
        guard case .property(let key, .toMany) = try compilation.compile(sequence) else {
            throw .invalidPredicate("contains(where:), allSatisfy and filter in a #Predicate go through a to-many relationship of a declared class")
        }
        var inner = PredicateCompilation()
        inner.variables = compilation.variables.mapValues { _ in "\u{0}outer" }  // the outer object cannot be named inside
        inner.variables[variable] = ""
        return (key, try inner.condition(test))
    }

    /// The attribute type whose comparison fits `value`.
    static func attributeType(of value: AttributeValue) -> AttributeType {
        switch value {
        case .string: return .string
        case .integer: return .integer64
        case .double: return .double
        case .bool: return .boolean
        case .date: return .date
        case .data: return .binary
        case .uuid: return .uuid
        case .url: return .uri
        case .decimal: return .decimal
        case .null: return .string
        }
    }
}

extension ComparisonOperator {
    /// The operator with its operands swapped (`a < b` is `b > a`).
    var mirrored: ComparisonOperator {
        switch self {
        case .equal, .notEqual: return self
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        }
    }
}

extension PropertyKind {
    /// What a key path ending in a value of `type` is.
    static func of(_ type: Any.Type) -> PropertyKind {
        if type is any ToManyCollection.Type || type is any QueryableModelCollection.Type { return .toMany }
        if type is ManagedObject.Type || type is any OptionalObject.Type { return .toOne }
        if type is any _QueryableModel.Type || type is any OptionalQueryableModel.Type { return .toOne }
        return .attribute
    }
}

/// A to-many relationship's value: a set or an array of objects.
protocol ToManyCollection {}
extension Set: ToManyCollection where Element: ManagedObject {}
extension Array: ToManyCollection where Element: ManagedObject {}

/// An optional object: a to-one relationship's value.
protocol OptionalObject {}
extension Optional: OptionalObject where Wrapped: ManagedObject {}
