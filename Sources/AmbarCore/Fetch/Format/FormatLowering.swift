import Foundation

/// Turns a parsed format into an ``ObjectPredicate``, giving `$VARIABLES` their values.
struct FormatLowering {
    let format: String
    let variables: [String: Any?]

    private func error(_ reason: String, at position: Int) -> AmbarError {
        .invalidPredicateFormat(format: format, position: position, reason: reason)
    }

    func lower(_ predicate: FormatPredicate) throws(AmbarError) -> ObjectPredicate {
        try lower(predicate, scopes: [nil])
    }

    /// `scopes` lists the objects the predicate can name, outermost first: the evaluated object
    /// (`nil`: bare key paths and `SELF`), then each enclosing `SUBQUERY`'s variable. The
    /// predicate is lowered for the last one.
    private func lower(_ predicate: FormatPredicate, scopes: [String?]) throws(AmbarError) -> ObjectPredicate {
        switch predicate {
        case .constant(let b): return .constant(b)
        case .and(let parts):
            var lowered: [ObjectPredicate] = []
            for p in parts { lowered.append(try lower(p, scopes: scopes)) }
            return .and(lowered)
        case .or(let parts):
            var lowered: [ObjectPredicate] = []
            for p in parts { lowered.append(try lower(p, scopes: scopes)) }
            return .or(lowered)
        case .not(let p): return .not(try lower(p, scopes: scopes))
        case .comparison(let quantifier, let lhs, let op, let options, let rhs, let position):
            let left = try operand(lhs, scopes: scopes)
            let right = try operand(rhs, scopes: scopes)
            // Written for the innermost object both sides reach; read from here through
            // `enclosing` that many ranges out.
            let levels = min(left.levels ?? Int.max, right.levels ?? Int.max)
            guard levels != Int.max else { throw error("a comparison needs a key path on one side and a value on the other", at: position) }
            let inner = try comparison(left.lifted(by: levels), op, options, right.lifted(by: levels), position)
            var lowered = quantifier.map { .quantified($0, inner) } ?? inner
            for _ in 0..<levels { lowered = .enclosing(lowered) }
            return lowered
        }
    }

    /// One side of a comparison, resolved against the scopes it can name.
    private enum Operand {
        case value(FormatValue, position: Int)
        /// A key path on the object `levels` ranges out (0: the innermost).
        case path([String], levels: Int, position: Int)
        /// The object itself (`SELF`, `$item`).
        case object(levels: Int, position: Int)
        /// `SUBQUERY(key, …)` on the object `levels` ranges out, its predicate lowered for the
        /// relationship's destination, and the key path applied to its result.
        case subquery(key: [String], ObjectPredicate, path: [String], levels: Int, position: Int)

        var levels: Int? {
            switch self {
            case .value: return nil
            case .path(_, let levels, _), .object(let levels, _), .subquery(_, _, _, let levels, _): return levels
            }
        }

        /// The operand as read from `levels` ranges further out.
        func lifted(by levels: Int) -> Operand {
            switch self {
            case .value: return self
            case .path(let path, let l, let position): return .path(path, levels: l - levels, position: position)
            case .object(let l, let position): return .object(levels: l - levels, position: position)
            case .subquery(let key, let predicate, let path, let l, let position):
                return .subquery(key: key, predicate, path: path, levels: l - levels, position: position)
            }
        }
    }

    private func operand(_ expression: FormatExpression, scopes: [String?]) throws(AmbarError) -> Operand {
        let innermost = scopes.count - 1
        switch expression {
        case .keyPath(let path, let position): return .path(path, levels: innermost, position: position)
        case .evaluatedObject(let position): return .object(levels: innermost, position: position)
        case .variable(let name, let position):
            if let bound = scopes.lastIndex(of: name) { return .object(levels: innermost - bound, position: position) }
            guard case .constant(let value, _) = try substitute(expression) else { return .value(.value(.null), position: position) }
            return .value(value, position: position)
        case .variableKeyPath(let name, let path, let position):
            if let bound = scopes.lastIndex(of: name) { return .path(path, levels: innermost - bound, position: position) }
            // A substitution variable holding a dictionary (`$FETCHED_PROPERTY.userInfo.genre`).
            guard let entry = variables[name] else {
                throw error("$\(name) is not a SUBQUERY's variable here, so $\(name).\(path.joined(separator: ".")) names nothing", at: position)
            }
            var value: Any? = entry
            for key in path {
                guard let dictionary = Self.dictionary(value), let next = dictionary[key] else {
                    throw error("$\(name).\(path.joined(separator: ".")) has no value: the substitution variable has no '\(key)' there", at: position)
                }
                value = next
            }
            return .value(try PredicateFormatParser.formatValue(value, format: format, position: position), position: position)
        case .constant(let value, let position): return .value(value, position: position)
        case .list(_, let position):
            guard case .constant(let value, _) = try substitute(expression) else { return .value(.list([]), position: position) }
            return .value(value, position: position)
        case .subquery(let collection, let variable, let predicate, let path, let position):
            // The collection is a key path of one of the scopes; the subquery ranges from there.
            let (key, owner): ([String], Int)
            switch try operand(collection, scopes: scopes) {
            case .path(let p, let levels, _): (key, owner) = (p, innermost - levels)
            default: throw error("SUBQUERY ranges over a to-many key path (SUBQUERY(items, $item, …))", at: collection.position)
            }
            // Its elements see the scopes out to the collection's owner; a variable further in
            // (the collection's owner is outside it) cannot be read from there.
            let hidden = scopes[(owner + 1)...].compactMap { $0 }.filter { predicate.variables.contains($0) }
            if let name = hidden.first {
                throw error(
                    "this SUBQUERY ranges over a collection of an object outside $\(name), so it cannot read $\(name); range over a key path of $\(name) (SUBQUERY($\(name).…, …))",
                    at: position)
            }
            let inner = try lower(predicate, scopes: Array(scopes[...owner]) + [variable])
            return .subquery(key: key, inner, path: path, levels: innermost - owner, position: position)
        }
    }

    /// A substitution value read as a dictionary by key, as key-value coding reads one.
    private static func dictionary(_ value: Any?) -> [String: Any?]? {
        switch value {
        case let d as [String: Any?]: return d
        case let d as [String: Any]: return d.mapValues { $0 }
        case let d as [String: String]: return d.mapValues { $0 }
        default: return nil
        }
    }

    /// The expression with variables replaced by their values.
    private func substitute(_ expression: FormatExpression) throws(AmbarError) -> FormatExpression {
        switch expression {
        case .variable(let name, let position):
            guard let entry = variables[name] else {
                throw error("$\(name) has no value; give it in the substitution variables", at: position)
            }
            return .constant(try PredicateFormatParser.formatValue(entry, format: format, position: position), position: position)
        case .list(let items, let position):
            var values: [FormatValue] = []
            for item in items {
                guard case .constant(let value, _) = try substitute(item) else {
                    throw error("a collection may hold values only, not key paths", at: item.position)
                }
                values.append(value)
            }
            return .constant(.list(values), position: position)
        default:
            return expression
        }
    }

    /// A comparison whose sides are read from the innermost object at least one of them names
    /// (`levels` 0); the other may name an object further out.
    private func comparison(_ lhs: Operand, _ op: FormatOperator, _ options: TextOptions, _ rhs: Operand, _ position: Int) throws(AmbarError)
        -> ObjectPredicate
    {
        switch (lhs, rhs) {
        case (.subquery(let key, let predicate, let path, 0, let subqueryPosition), .value(let value, _)):
            return try subqueryComparison(key, predicate, path, op, value, subqueryPosition)
        case (.value(let value, _), .subquery(let key, let predicate, let path, 0, let subqueryPosition)):
            guard let swapped = op.swapped else {
                throw error("\(op.rawValue) needs SUBQUERY(…).@count on its left", at: position)
            }
            return try subqueryComparison(key, predicate, path, swapped, value, subqueryPosition)
        case (.subquery, _), (_, .subquery):
            throw error("SUBQUERY(…).@count compares with a number (SUBQUERY(items, $item, …).@count > 0)", at: position)
        case (.path(let left, 0, _), .path(let right, let levels, _)) where levels > 0:
            return try outerComparison(left, op, options, right, levels, position, swapped: false)
        case (.path(let left, let levels, _), .path(let right, 0, _)) where levels > 0:
            return try outerComparison(right, op, options, left, levels, position, swapped: true)
        case (.path(_, let a, _), .object(let b, _)) where a != b, (.object(let a, _), .path(_, let b, _)) where a != b,
            (.object(let a, _), .object(let b, _)) where a != b:
            throw error("comparing an object with a key path or an object of another scope is not supported; compare key paths of attributes", at: position)
        default:
            return try comparison(try expression(lhs), op, options, try expression(rhs), position)
        }
    }

    /// The operand, read from the innermost object, as the format expression it stands for.
    private func expression(_ operand: Operand) throws(AmbarError) -> FormatExpression {
        switch operand {
        case .value(let value, let position): return .constant(value, position: position)
        case .path(let path, _, let position): return .keyPath(path, position: position)
        case .object(_, let position): return .evaluatedObject(position: position)
        case .subquery(_, _, _, _, let position): throw error("SUBQUERY(…).@count compares with a number", at: position)
        }
    }

    /// `path op outer` where `outer` is an attribute of the object `levels` ranges out.
    private func outerComparison(
        _ path: [String], _ op: FormatOperator, _ options: TextOptions, _ outer: [String], _ levels: Int, _ position: Int, swapped: Bool
    ) throws(AmbarError) -> ObjectPredicate {
        guard let comparison = op.comparison else {
            throw error("\(op.rawValue) between two key paths is not supported; compare them with ==, !=, <, <=, > or >=", at: position)
        }
        let inner = try expression(path, position)
        let other = ObjectExpression.outer(try plainKey(outer, position), levels: levels)
        return swapped ? .keyComparison(other, comparison, inner, options: options) : .keyComparison(inner, comparison, other, options: options)
    }

    /// `SUBQUERY(key, $x, predicate).@count op value` (and `BETWEEN`, `IN`).
    private func subqueryComparison(
        _ key: [String], _ predicate: ObjectPredicate, _ path: [String], _ op: FormatOperator, _ value: FormatValue, _ position: Int
    ) throws(AmbarError) -> ObjectPredicate {
        guard path.count == 1, path[0].lowercased() == "@count" else {
            throw error("SUBQUERY(…) is compared by its number of objects: SUBQUERY(…).@count", at: position)
        }
        let relationship = try plainKey(key, position)
        return try countComparison(op, value, position) { .subquery(key: relationship, predicate, op: $0, count: $1) }
    }

    private func comparison(_ lhs: FormatExpression, _ op: FormatOperator, _ options: TextOptions, _ rhs: FormatExpression, _ position: Int) throws(AmbarError)
        -> ObjectPredicate
    {
        switch (lhs, rhs) {
        case (.keyPath(let path, _), .constant(let value, let valuePosition)):
            return try keyComparison(path, op, options, value, valuePosition)
        case (.constant(let value, let valuePosition), .keyPath(let path, _)):
            if op == .in { return try membership(value, in: path, options, valuePosition) }
            guard let swapped = op.swapped else {
                throw error("\(op.rawValue) needs the key path on its left (\"key \(op.rawValue) value\")", at: position)
            }
            return try keyComparison(path, swapped, options, value, valuePosition)
        case (.evaluatedObject, .constant(let value, let valuePosition)), (.constant(let value, let valuePosition), .evaluatedObject):
            return try selfComparison(op, value, valuePosition)
        case (.keyPath(let left, _), .keyPath(let right, _)):
            guard let comparison = op.comparison else {
                throw error("\(op.rawValue) between two key paths is not supported; compare them with ==, !=, <, <=, > or >=", at: position)
            }
            return .keyComparison(try expression(left, position), comparison, try expression(right, position), options: options)
        case (.keyPath, .evaluatedObject), (.evaluatedObject, .keyPath):
            throw error("comparing SELF with a key path is not supported; compare SELF with an object or a key path with a value", at: position)
        default:
            throw error("a comparison needs a key path on one side and a value on the other", at: position)
        }
    }

    private func selfComparison(_ op: FormatOperator, _ value: FormatValue, _ position: Int) throws(AmbarError) -> ObjectPredicate {
        func ids(_ value: FormatValue) throws(AmbarError) -> [ManagedObjectID] {
            switch value {
            case .object(let id): return [id]
            case .list(let items):
                var result: [ManagedObjectID] = []
                for item in items { result += try ids(item) }
                return result
            case .value(.null): return []
            case .value: throw error("SELF compares with managed objects or object IDs only", at: position)
            }
        }
        switch op {
        case .equal: return .objectIn(try ids(value))
        case .notEqual: return .not(.objectIn(try ids(value)))
        case .in: return .objectIn(try ids(value))
        default: throw error("SELF supports ==, != and IN", at: position)
        }
    }

    /// `value IN key`: the key path's collection holds the value.
    private func membership(_ value: FormatValue, in path: [String], _ options: TextOptions, _ position: Int) throws(AmbarError) -> ObjectPredicate {
        let key = try plainKey(path, position)
        switch value {
        case .object(let id): return .any(key: key, .objectIn([id]))
        case .value(let v): return .quantified(.any, .comparison(key: key, op: .equal, value: v, options: options))
        case .list: throw error("a collection IN a key path is not supported; use key IN collection", at: position)
        }
    }

    /// A key path as one side of a comparison of two key paths: an attribute, `rel.@count`, or
    /// `rel.@sum.attribute` (and `@avg`, `@min`, `@max`).
    private func expression(_ path: [String], _ position: Int) throws(AmbarError) -> ObjectExpression {
        guard let at = path.firstIndex(where: { $0.hasPrefix("@") }) else { return .key(try plainKey(path, position)) }
        let relationship = path[..<at].joined(separator: ".")
        guard !relationship.isEmpty else { throw error("\(path[at]) needs a to-many key path before it", at: position) }
        guard let function = AggregateFunction(rawValue: String(path[at].dropFirst()).lowercased()) else {
            throw error("\(path[at]) is not a collection operator Ambar supports (@count, @sum, @avg, @min, @max)", at: position)
        }
        if function == .count {
            guard at == path.count - 1 else { throw error("@count ends a key path", at: position) }
            return .count(relationship)
        }
        guard at == path.count - 2 else {
            throw error("@\(function.rawValue) must be followed by one attribute name (rel.@\(function.rawValue).attribute)", at: position)
        }
        return .aggregate(relationship, function, attribute: path[at + 1])
    }

    private func plainKey(_ path: [String], _ position: Int) throws(AmbarError) -> String {
        if let operatorIndex = path.firstIndex(where: { $0.hasPrefix("@") }) {
            throw error("\(path[operatorIndex]) is not allowed here", at: position)
        }
        guard !path.isEmpty, path.allSatisfy({ !$0.isEmpty }) else { throw error("empty key path", at: position) }
        return path.joined(separator: ".")
    }

    private func keyComparison(_ path: [String], _ op: FormatOperator, _ options: TextOptions, _ value: FormatValue, _ position: Int) throws(AmbarError)
        -> ObjectPredicate
    {
        // Collection operators: rel.@count, rel.@sum.attribute…
        switch try expression(path, position) {
        case .count(let relationship): return try countComparison(op, value, position) { .count(key: relationship, op: $0, count: $1) }
        case .aggregate(let relationship, let function, let attribute): return try aggregateComparison(relationship, function, attribute, op, value, position)
        case .key, .outer: break
        }
        let key = try plainKey(path, position)
        switch op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            let comparison = op.comparison ?? .equal
            switch value {
            case .object(let id):
                guard op == .equal || op == .notEqual else { throw error("objects compare with == and != only", at: position) }
                return op == .equal ? .relationship(key: key, target: id) : .not(.relationship(key: key, target: id))
            case .value(let v):
                return .comparison(key: key, op: comparison, value: v, options: options)
            case .list:
                throw error("\(op.rawValue) compares with one value, not a collection (use IN)", at: position)
            }
        case .in:
            guard case .list(let items) = value else {
                if case .object(let id) = value { return .relationship(key: key, target: id) }
                if case .value(.string(let s)) = value {
                    throw error("IN needs a collection on its right; '\(s)' is a string (use CONTAINS for text)", at: position)
                }
                throw error("IN needs a collection on its right", at: position)
            }
            var values: [AttributeValue] = []
            var objects: [ManagedObjectID] = []
            for item in items {
                switch item {
                case .value(let v): values.append(v)
                case .object(let id): objects.append(id)
                case .list: throw error("IN takes a flat collection", at: position)
                }
            }
            if !objects.isEmpty {
                guard values.allSatisfy(\.isNull) else { throw error("IN mixes objects and values", at: position) }
                return .or(objects.map { .relationship(key: key, target: $0) })
            }
            return .isIn(key: key, values: values, options: options)
        case .between:
            guard case .list(let items) = value, items.count == 2, case .value(let lower) = items[0], case .value(let upper) = items[1] else {
                throw error("BETWEEN needs a collection of two values: BETWEEN {low, high}", at: position)
            }
            return .between(key: key, lower: lower, upper: upper)
        case .beginsWith, .endsWith, .contains, .like, .matches:
            guard let textOp = op.text else { throw error("unsupported operator", at: position) }
            switch value {
            case .value(.string(let pattern)):
                if textOp == .matches, case .invalidPredicate(let reason)? = RegularExpressions.problem(with: pattern) {
                    throw error(reason, at: position)
                }
                return .text(key: key, op: textOp, pattern: pattern, options: options)
            case .object(let id) where op == .contains:
                return .any(key: key, .objectIn([id]))
            case .value(.null):
                return .constant(false)
            default:
                throw error("\(op.rawValue) needs a string on its right", at: position)
            }
        }
    }

    /// A number of objects compared with a value (`op` a comparison, `BETWEEN` or `IN`), each
    /// single comparison made by `make`.
    private func countComparison(
        _ op: FormatOperator, _ value: FormatValue, _ position: Int, _ make: (ComparisonOperator, Int) -> ObjectPredicate
    ) throws(AmbarError) -> ObjectPredicate {
        func count(_ v: FormatValue) throws(AmbarError) -> Int {
            switch v {
            case .value(.integer(let n)): return Int(n)
            case .value(.double(let d)) where d.rounded() == d && abs(d) < 1e15: return Int(d)
            default: throw error("@count compares with a whole number", at: position)
            }
        }
        if let comparison = op.comparison { return make(comparison, try count(value)) }
        switch (op, value) {
        case (.between, .list(let items)) where items.count == 2:
            return .and([make(.greaterOrEqual, try count(items[0])), make(.lessOrEqual, try count(items[1]))])
        case (.in, .list(let items)):
            var parts: [ObjectPredicate] = []
            for item in items { parts.append(make(.equal, try count(item))) }
            return .or(parts)
        default:
            throw error("@count supports comparisons, BETWEEN and IN", at: position)
        }
    }

    private func aggregateComparison(
        _ key: String, _ function: AggregateFunction, _ attribute: String, _ op: FormatOperator, _ value: FormatValue, _ position: Int
    ) throws(AmbarError) -> ObjectPredicate {
        func plain(_ v: FormatValue) throws(AmbarError) -> AttributeValue {
            guard case .value(let value) = v else { throw error("@\(function.rawValue) compares with a value", at: position) }
            return value
        }
        if let comparison = op.comparison {
            return .aggregate(key: key, function: function, attribute: attribute, op: comparison, value: try plain(value))
        }
        switch (op, value) {
        case (.between, .list(let items)) where items.count == 2:
            return .and([
                .aggregate(key: key, function: function, attribute: attribute, op: .greaterOrEqual, value: try plain(items[0])),
                .aggregate(key: key, function: function, attribute: attribute, op: .lessOrEqual, value: try plain(items[1])),
            ])
        case (.in, .list(let items)):
            var parts: [ObjectPredicate] = []
            for item in items { parts.append(.aggregate(key: key, function: function, attribute: attribute, op: .equal, value: try plain(item))) }
            return .or(parts)
        default:
            throw error("@\(function.rawValue) supports comparisons, BETWEEN and IN", at: position)
        }
    }
}
