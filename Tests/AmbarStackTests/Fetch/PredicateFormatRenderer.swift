import AmbarStack
import Foundation

/// Renders a predicate as an `NSPredicate` format string with arguments, choosing at random among
/// the spellings the grammar allows (operator synonyms, keyword case, literals or `%@`, operands
/// swapped), so that parsing it back exercises the whole grammar.
struct PredicateFormatRenderer {
    var rng: SeededRandom
    private(set) var arguments: [Any?] = []

    init(seed: UInt64) { rng = SeededRandom(seed: seed) }

    private mutating func pick<T>(_ choices: [T]) -> T { choices.randomElement(using: &rng)! }
    private mutating func flip() -> Bool { Bool.random(using: &rng) }

    private mutating func keyword(_ word: String) -> String {
        pick([word, word.lowercased(), word.prefix(1) + word.dropFirst().lowercased()])
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private mutating func options(_ options: TextOptions) -> String {
        switch (options.contains(.caseInsensitive), options.contains(.diacriticInsensitive)) {
        case (true, true): return pick(["[cd]", "[dc]", "[CD]"])
        case (true, false): return pick(["[c]", "[C]"])
        case (false, true): return "[d]"
        case (false, false): return ""
        }
    }

    /// A value as a literal when the grammar has one, else (or at random) as `%@`.
    private mutating func value(_ v: AttributeValue) -> String {
        let useArgument = flip()
        switch v {
        case .null:
            if useArgument {
                arguments.append(nil as Any?)
                return "%@"
            }
            return pick(["nil", "NULL", "Nil"])
        case .string(let s):
            if useArgument {
                arguments.append(s)
                return "%@"
            }
            return Self.quote(s)
        case .integer(let n):
            if useArgument {
                arguments.append(n)
                return pick(["%@", "%lld", "%d", "%ld"])
            }
            return String(n)
        case .double(let d):
            if useArgument || d.sign == .minus && d == 0 {
                arguments.append(d)
                return pick(["%@", "%f"])
            }
            return "\(d)"
        case .bool(let b):
            if useArgument {
                arguments.append(b)
                return "%@"
            }
            return b ? pick(["YES", "TRUE", "true", "yes"]) : pick(["NO", "FALSE", "false", "no"])
        case .date(let d):
            if useArgument {
                arguments.append(d)
                return "%@"
            }
            return "CAST(\(d.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .data(let d):
            arguments.append(d)
            return "%@"
        case .uuid(let u):
            arguments.append(u)
            return "%@"
        case .url(let u):
            arguments.append(u)
            return "%@"
        case .decimal(let d):
            arguments.append(d)
            return "%@"
        }
    }

    private mutating func key(_ path: String) -> String {
        if flip() {
            arguments.append(path)
            return "%K"
        }
        return path
    }

    private mutating func comparison(_ op: ComparisonOperator) -> String {
        switch op {
        case .equal: return pick(["==", "="])
        case .notEqual: return pick(["!=", "<>"])
        case .less: return "<"
        case .lessOrEqual: return pick(["<=", "=<"])
        case .greater: return ">"
        case .greaterOrEqual: return pick([">=", "=>"])
        }
    }

    private static func swapped(_ op: ComparisonOperator) -> ComparisonOperator {
        switch op {
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        default: return op
        }
    }

    /// The format for `predicate`; its arguments accumulate in ``arguments``.
    mutating func render(_ predicate: ObjectPredicate) -> String {
        switch predicate {
        case .constant(let b):
            return b ? keyword("TRUEPREDICATE") : keyword("FALSEPREDICATE")
        case .and(let parts):
            if parts.isEmpty { return keyword("TRUEPREDICATE") }
            var rendered: [String] = []
            for p in parts { rendered.append(render(p)) }
            let joiner = flip() ? " \(keyword("AND")) " : " && "
            return "(" + rendered.joined(separator: joiner) + ")"
        case .or(let parts):
            if parts.isEmpty { return keyword("FALSEPREDICATE") }
            var rendered: [String] = []
            for p in parts { rendered.append(render(p)) }
            let joiner = flip() ? " \(keyword("OR")) " : " || "
            return "(" + rendered.joined(separator: joiner) + ")"
        case .not(let p):
            let inner = render(p)
            return flip() ? "\(keyword("NOT")) (\(inner))" : "!(\(inner))"
        case .comparison(let path, let op, let v, let opts):
            if flip() && !v.isNull {
                let lhs = value(v)
                let o = options(opts)
                return "\(lhs) \(comparison(Self.swapped(op)))\(o) \(key(path))"
            }
            let k = key(path)
            return "\(k) \(comparison(op))\(options(opts)) \(value(v))"
        case .isIn(let path, let values, let opts):
            let k = key(path)
            let o = options(opts)
            if flip() {
                arguments.append(values.map { AnyArgument.unwrap($0) })
                return "\(k) \(keyword("IN"))\(o) %@"
            }
            var items: [String] = []
            for v in values { items.append(value(v)) }
            return "\(k) \(keyword("IN"))\(o) {\(items.joined(separator: ", "))}"
        case .between(let path, let lower, let upper):
            let k = key(path)
            if flip() {
                arguments.append([AnyArgument.unwrap(lower), AnyArgument.unwrap(upper)])
                return "\(k) \(keyword("BETWEEN")) %@"
            }
            return "\(k) \(keyword("BETWEEN")) {\(value(lower)), \(value(upper))}"
        case .text(let path, let op, let pattern, let opts):
            let word = ["beginsWith": "BEGINSWITH", "contains": "CONTAINS", "endsWith": "ENDSWITH", "like": "LIKE", "matches": "MATCHES"][op.rawValue]!
            let k = key(path)
            return "\(k) \(keyword(word))\(options(opts)) \(value(.string(pattern)))"
        case .keyComparison(.key(let a), let op, .key(let b), let opts):
            return "\(key(a)) \(comparison(op))\(options(opts)) \(key(b))"
        default:
            preconditionFailure("the random generator does not make \(predicate)")
        }
    }
}

/// Attribute values as the Swift values a caller would pass for `%@`.
enum AnyArgument {
    static func unwrap(_ value: AttributeValue) -> Any? {
        switch value {
        case .null: return nil
        case .string(let s): return s
        case .integer(let n): return n
        case .double(let d): return d
        case .bool(let b): return b
        case .date(let d): return d
        case .data(let d): return d
        case .uuid(let u): return u
        case .url(let u): return u
        case .decimal(let d): return d
        }
    }
}
