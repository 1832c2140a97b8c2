import Foundation

/// A value in a parsed format: a plain value, an object (from a managed object or object ID
/// argument), or a collection (`{1, 2}`, an array argument).
enum FormatValue {
    case value(AttributeValue)
    case object(ManagedObjectID)
    case list([FormatValue])
}

/// An operand of a comparison in a parsed format.
indirect enum FormatExpression {
    case keyPath([String], position: Int)
    case constant(FormatValue, position: Int)
    case variable(String, position: Int)
    /// `$x.key.path`: a key path from a `SUBQUERY`'s variable.
    case variableKeyPath(String, [String], position: Int)
    case list([FormatExpression], position: Int)
    case evaluatedObject(position: Int)
    /// `SUBQUERY(collection, $variable, predicate)` followed by `path` (`.@count`).
    case subquery(collection: FormatExpression, variable: String, predicate: FormatPredicate, path: [String], position: Int)

    var position: Int {
        switch self {
        case .keyPath(_, let p), .constant(_, let p), .variable(_, let p), .variableKeyPath(_, _, let p), .list(_, let p), .evaluatedObject(let p),
            .subquery(_, _, _, _, let p):
            return p
        }
    }

    /// The names of the substitution variables it uses (a `SUBQUERY`'s own variable is bound, not
    /// substituted).
    var variables: Set<String> {
        switch self {
        case .variable(let name, _), .variableKeyPath(let name, _, _): return [name]
        case .list(let items, _): return items.reduce(into: []) { $0.formUnion($1.variables) }
        case .subquery(let collection, let variable, let predicate, _, _):
            return collection.variables.union(predicate.variables.subtracting([variable]))
        case .keyPath, .constant, .evaluatedObject: return []
        }
    }
}

/// The operators of `NSPredicate`'s comparison grammar.
enum FormatOperator: String {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case `in` = "IN"
    case between = "BETWEEN"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case matches = "MATCHES"

    var comparison: ComparisonOperator? {
        switch self {
        case .equal: return .equal
        case .notEqual: return .notEqual
        case .less: return .less
        case .lessOrEqual: return .lessOrEqual
        case .greater: return .greater
        case .greaterOrEqual: return .greaterOrEqual
        default: return nil
        }
    }

    var text: TextOperator? {
        switch self {
        case .beginsWith: return .beginsWith
        case .endsWith: return .endsWith
        case .contains: return .contains
        case .like: return .like
        case .matches: return .matches
        default: return nil
        }
    }

    /// The operator with its operands swapped (`5 < x` is `x > 5`).
    var swapped: FormatOperator? {
        switch self {
        case .equal, .notEqual: return self
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        default: return nil
        }
    }
}

/// A parsed format, before its `$VARIABLES` are given values.
indirect enum FormatPredicate {
    case constant(Bool)
    case and([FormatPredicate])
    case or([FormatPredicate])
    case not(FormatPredicate)
    case comparison(quantifier: Quantifier?, lhs: FormatExpression, op: FormatOperator, options: TextOptions, rhs: FormatExpression, position: Int)

    /// The names of the substitution variables it uses.
    var variables: Set<String> {
        switch self {
        case .constant: return []
        case .and(let parts), .or(let parts): return parts.reduce(into: []) { $0.formUnion($1.variables) }
        case .not(let p): return p.variables
        case .comparison(_, let lhs, _, _, let rhs, _): return lhs.variables.union(rhs.variables)
        }
    }
}
