import Foundation

/// Turns a parsed format into an ``ObjectPredicate``, giving `$VARIABLES` their values.
struct FormatLowering {
    let format: String
    let variables: [String: Any?]

    private func error(_ reason: String, at position: Int) -> AmbarError {
        .invalidPredicateFormat(format: format, position: position, reason: reason)
    }

    func lower(_ predicate: FormatPredicate) throws(AmbarError) -> ObjectPredicate {
        switch predicate {
        case .constant(let b): return .constant(b)
        case .and(let parts):
            var lowered: [ObjectPredicate] = []
            for p in parts { lowered.append(try lower(p)) }
            return .and(lowered)
        case .or(let parts):
            var lowered: [ObjectPredicate] = []
            for p in parts { lowered.append(try lower(p)) }
            return .or(lowered)
        case .not(let p): return .not(try lower(p))
        case .comparison(let quantifier, let lhs, let op, let options, let rhs, let position):
            let inner = try comparison(try substitute(lhs), op, options, try substitute(rhs), position)
            return quantifier.map { .quantified($0, inner) } ?? inner
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
        case .count(let relationship): return try countComparison(relationship, op, value, position)
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

    private func countComparison(_ key: String, _ op: FormatOperator, _ value: FormatValue, _ position: Int) throws(AmbarError) -> ObjectPredicate {
        func count(_ v: FormatValue) throws(AmbarError) -> Int {
            switch v {
            case .value(.integer(let n)): return Int(n)
            case .value(.double(let d)) where d.rounded() == d && abs(d) < 1e15: return Int(d)
            default: throw error("@count compares with a whole number", at: position)
            }
        }
        if let comparison = op.comparison { return .count(key: key, op: comparison, count: try count(value)) }
        switch (op, value) {
        case (.between, .list(let items)) where items.count == 2:
            return .and([.count(key: key, op: .greaterOrEqual, count: try count(items[0])), .count(key: key, op: .lessOrEqual, count: try count(items[1]))])
        case (.in, .list(let items)):
            var parts: [ObjectPredicate] = []
            for item in items { parts.append(.count(key: key, op: .equal, count: try count(item))) }
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
