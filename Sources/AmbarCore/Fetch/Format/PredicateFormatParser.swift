import Foundation

/// Parses `NSPredicate`'s format grammar (as Core Data's SQLite store accepts it) into a
/// ``FormatPredicate``, taking format arguments (`%@`, `%K`, `%d`…) in order.
struct PredicateFormatParser {
    private let format: String
    private let tokens: [FormatToken]
    private var index = 0
    private var arguments: [Any?]
    private var nextArgument = 0
    /// How deeply parentheses, `NOT`s and collections nest at the current token.
    private var depth = 0
    /// The deepest nesting accepted: a recursive parser must stop before the stack does (found
    /// by fuzz-predicate-format with thousands of `{`).
    static let maximumDepth = 100

    init(format: String, arguments: [Any?]) throws(AmbarError) {
        self.format = format
        var lexer = PredicateFormatLexer(format)
        self.tokens = try lexer.tokens()
        self.arguments = arguments
    }

    /// Parses the whole format.
    mutating func parse() throws(AmbarError) -> FormatPredicate {
        let predicate = try parseOr()
        guard case .end = current.kind else { throw error("expected AND, OR or the end of the format", at: current.position) }
        guard nextArgument == arguments.count else {
            throw error("the format has \(nextArgument) argument specifier(s) but \(arguments.count) arguments were given", at: current.position)
        }
        return predicate
    }

    // MARK: - Tokens

    private var current: FormatToken { tokens[index] }

    private func error(_ reason: String, at position: Int) -> AmbarError {
        .invalidPredicateFormat(format: format, position: position, reason: reason)
    }

    /// The keyword the current token spells (upper-cased), unless it is escaped with `#`.
    private var keyword: String? {
        if case .identifier(let name, false) = current.kind { return name.uppercased() }
        return nil
    }

    private func isSymbol(_ s: String) -> Bool { current.kind == .symbol(s) }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    /// Enters one level of nesting; throws past ``maximumDepth``. Pair with `depth -= 1`.
    private mutating func nest() throws(AmbarError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("the format nests parentheses, NOTs or collections more than \(Self.maximumDepth) levels deep", at: current.position)
        }
    }

    private mutating func expect(_ symbol: String, _ what: String) throws(AmbarError) {
        guard isSymbol(symbol) else { throw error("expected '\(symbol)' \(what)", at: current.position) }
        advance()
    }

    // MARK: - Predicates

    private mutating func parseOr() throws(AmbarError) -> FormatPredicate {
        var parts = [try parseAnd()]
        while keyword == "OR" || isSymbol("||") {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws(AmbarError) -> FormatPredicate {
        var parts = [try parseNot()]
        while keyword == "AND" || isSymbol("&&") {
            advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseNot() throws(AmbarError) -> FormatPredicate {
        if keyword == "NOT" || isSymbol("!") {
            try nest()
            defer { depth -= 1 }
            advance()
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws(AmbarError) -> FormatPredicate {
        if isSymbol("(") {
            try nest()
            defer { depth -= 1 }
            advance()
            let inner = try parseOr()
            try expect(")", "to close the parenthesis")
            return inner
        }
        switch keyword {
        case "TRUEPREDICATE":
            advance()
            return .constant(true)
        case "FALSEPREDICATE":
            advance()
            return .constant(false)
        default: return try parseComparison()
        }
    }

    private mutating func parseComparison() throws(AmbarError) -> FormatPredicate {
        let start = current.position
        var quantifier: Quantifier?
        switch keyword {
        case "ANY", "SOME":
            quantifier = .any
            advance()
        case "ALL":
            quantifier = .all
            advance()
        case "NONE":
            quantifier = Quantifier.none
            advance()
        default: break
        }
        let lhs = try parseExpression()
        let opPosition = current.position
        let op: FormatOperator
        if case .symbol(let s) = current.kind {
            switch s {
            case "==", "=": op = .equal
            case "!=", "<>": op = .notEqual
            case "<": op = .less
            case "<=", "=<": op = .lessOrEqual
            case ">": op = .greater
            case ">=", "=>": op = .greaterOrEqual
            default:
                throw error("expected a comparison operator (==, !=, <, <=, >, >=, IN, BETWEEN, BEGINSWITH, CONTAINS, ENDSWITH, LIKE, MATCHES)", at: opPosition)
            }
        } else if let word = keyword, let found = FormatOperator(rawValue: word), found.comparison == nil {
            op = found
        } else {
            throw error("expected a comparison operator (==, !=, <, <=, >, >=, IN, BETWEEN, BEGINSWITH, CONTAINS, ENDSWITH, LIKE, MATCHES)", at: opPosition)
        }
        advance()
        let options = try parseOptions()
        let rhs = try parseExpression()
        return .comparison(quantifier: quantifier, lhs: lhs, op: op, options: options, rhs: rhs, position: start)
    }

    /// `[c]`, `[d]`, `[cd]` (and `n`, `l`, which change nothing here).
    private mutating func parseOptions() throws(AmbarError) -> TextOptions {
        guard isSymbol("[") else { return [] }
        let start = current.position
        advance()
        guard case .identifier(let letters, _) = current.kind else { throw error("expected options such as [c], [d] or [cd]", at: current.position) }
        var options: TextOptions = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n", "l": break
            default: throw error("unknown comparison option '\(letter)' (c, d, n, l)", at: start)
            }
        }
        advance()
        try expect("]", "to close the options")
        return options
    }

    // MARK: - Expressions

    private mutating func parseExpression() throws(AmbarError) -> FormatExpression {
        let position = current.position
        switch current.kind {
        case .string(let s):
            advance()
            return .constant(.value(.string(s)), position: position)
        case .integer(let v):
            advance()
            return .constant(.value(.integer(v)), position: position)
        case .double(let d):
            advance()
            return .constant(.value(.double(d)), position: position)
        case .variable(let name):
            advance()
            if isSymbol(".") {
                advance()
                return .variableKeyPath(name, try keyPathComponents(), position: position)
            }
            return .variable(name, position: position)
        case .specifier(let conversion):
            advance()
            return try argument(conversion, at: position)
        case .symbol("{"):
            try nest()
            defer { depth -= 1 }
            advance()
            var items: [FormatExpression] = []
            if !isSymbol("}") {
                items.append(try parseExpression())
                while isSymbol(",") {
                    advance()
                    items.append(try parseExpression())
                }
            }
            try expect("}", "to close the collection")
            return .list(items, position: position)
        case .symbol("("):
            throw error("a parenthesised value is not supported here; write the comparison without the parentheses", at: position)
        case .identifier(let name, let escaped):
            if !escaped {
                switch name.uppercased() {
                case "NIL", "NULL":
                    advance()
                    return .constant(.value(.null), position: position)
                case "YES", "TRUE":
                    advance()
                    return .constant(.value(.bool(true)), position: position)
                case "NO", "FALSE":
                    advance()
                    return .constant(.value(.bool(false)), position: position)
                case "SELF":
                    advance()
                    if isSymbol(".") {
                        advance()
                        return .keyPath(try keyPathComponents(), position: position)
                    }
                    return .evaluatedObject(position: position)
                case "CAST": return try parseCast()
                case "SUBQUERY": return try parseSubquery()
                case "FUNCTION", "FIRST", "LAST", "SIZE":
                    throw error("\(name.uppercased()) is not supported; use ANY/ALL/NONE with a key path, or @count / @sum / @avg / @min / @max", at: position)
                case "AND", "OR", "NOT", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "ANY", "ALL", "NONE", "SOME",
                    "TRUEPREDICATE", "FALSEPREDICATE":
                    throw error(
                        "expected a key path or a value, found the keyword \(name.uppercased()) (escape a property with that name as #\(name))", at: position)
                default: break
                }
            }
            return .keyPath(try keyPathComponents(), position: position)
        case .symbol(let s):
            throw error("expected a key path or a value, found '\(s)'", at: position)
        case .end:
            throw error("the format ends where a key path or a value is expected", at: position)
        }
    }

    private mutating func keyPathComponents() throws(AmbarError) -> [String] {
        var parts: [String] = []
        while true {
            guard case .identifier(let name, _) = current.kind else { throw error("expected a key path component", at: current.position) }
            parts.append(name)
            advance()
            guard isSymbol(".") else { return parts }
            advance()
        }
    }

    /// `SUBQUERY(collection, $variable, predicate)`, then the key path applied to its result
    /// (`.@count`).
    private mutating func parseSubquery() throws(AmbarError) -> FormatExpression {
        let position = current.position
        try nest()
        defer { depth -= 1 }
        advance()
        try expect("(", "after SUBQUERY")
        let collection = try parseExpression()
        switch collection {
        case .keyPath, .variableKeyPath: break
        default: throw error("SUBQUERY ranges over a to-many key path (SUBQUERY(items, $item, …))", at: collection.position)
        }
        try expect(",", "after SUBQUERY's collection")
        guard case .variable(let variable) = current.kind else {
            throw error("expected SUBQUERY's variable, such as $item, after the collection", at: current.position)
        }
        advance()
        try expect(",", "after SUBQUERY's variable")
        let predicate = try parseOr()
        try expect(")", "to close SUBQUERY")
        var path: [String] = []
        if isSymbol(".") {
            advance()
            path = try keyPathComponents()
        }
        return .subquery(collection: collection, variable: variable, predicate: predicate, path: path, position: position)
    }

    /// `CAST(number, "NSDate")`: a date given as seconds since 2001-01-01 (what `NSPredicate`
    /// writes for dates in its own format strings).
    private mutating func parseCast() throws(AmbarError) -> FormatExpression {
        let position = current.position
        advance()
        try expect("(", "after CAST")
        let seconds: Double
        switch current.kind {
        case .integer(let v): seconds = Double(v)
        case .double(let d): seconds = d
        case .string(let s):
            guard let d = Double(s) else { throw error("CAST needs a number of seconds", at: current.position) }
            seconds = d
        default: throw error("CAST needs a number of seconds", at: current.position)
        }
        advance()
        try expect(",", "in CAST")
        guard case .string(let type) = current.kind, type == "NSDate" else {
            throw error("only CAST(…, \"NSDate\") is supported", at: current.position)
        }
        advance()
        try expect(")", "to close CAST")
        return .constant(.value(.date(Date(timeIntervalSinceReferenceDate: seconds))), position: position)
    }

    // MARK: - Arguments

    private mutating func argument(_ conversion: String, at position: Int) throws(AmbarError) -> FormatExpression {
        guard nextArgument < arguments.count else {
            throw error("'%\(conversion)' has no argument (only \(arguments.count) given)", at: position)
        }
        let value = arguments[nextArgument]
        nextArgument += 1
        switch conversion {
        case "K":
            guard let path = value as? String, !path.isEmpty else {
                throw error("%K needs a key path given as a String, got \(value.map { "\(type(of: $0))" } ?? "nil")", at: position)
            }
            return .keyPath(path.split(separator: ".", omittingEmptySubsequences: false).map(String.init), position: position)
        case "@":
            return .constant(try Self.formatValue(value, format: format, position: position), position: position)
        case "d", "i", "u", "x", "X", "o", "c", "D", "U", "O":
            guard let number = Self.integer(value) else {
                throw error("%\(conversion) needs an integer argument, got \(Self.describe(value))", at: position)
            }
            return .constant(.value(.integer(number)), position: position)
        case "f", "g", "e", "F", "E", "G":
            if let number = Self.integer(value) { return .constant(.value(.double(Double(number))), position: position) }
            switch value {
            case let d as Double: return .constant(.value(.double(d)), position: position)
            case let f as Float: return .constant(.value(.double(Double(f))), position: position)
            default: throw error("%\(conversion) needs a floating-point argument, got \(Self.describe(value))", at: position)
            }
        case "s":
            guard let s = value as? String else { throw error("%s needs a String argument", at: position) }
            return .constant(.value(.string(s)), position: position)
        default:
            throw error("'%\(conversion)' is not supported", at: position)
        }
    }

    static func describe(_ value: Any?) -> String {
        guard let value else { return "nil" }
        return "\(type(of: value)) \(value)"
    }

    static func integer(_ value: Any?) -> Int64? {
        switch value {
        case let v as Int: return Int64(v)
        case let v as Int64: return v
        case let v as Int32: return Int64(v)
        case let v as Int16: return Int64(v)
        case let v as Int8: return Int64(v)
        case let v as UInt: return Int64(exactly: v)
        case let v as UInt64: return Int64(exactly: v)
        case let v as UInt32: return Int64(v)
        case let v as UInt16: return Int64(v)
        case let v as UInt8: return Int64(v)
        case let v as Bool: return v ? 1 : 0
        default: return nil
        }
    }

    /// What a `%@` argument or a substitution variable stands for.
    static func formatValue(_ value: Any?, format: String, position: Int) throws(AmbarError) -> FormatValue {
        guard let value else { return .value(.null) }
        if let optional = value as? any OptionalProtocol {
            guard let wrapped = optional.wrapped else { return .value(.null) }
            return try formatValue(wrapped, format: format, position: position)
        }
        switch value {
        case let v as AttributeValue: return .value(v)
        case let id as ManagedObjectID: return .object(id)
        case let object as ManagedObject: return .object(object.objectID)
        case let s as String: return .value(.string(s))
        case let s as Substring: return .value(.string(String(s)))
        case let d as Double: return .value(.double(d))
        case let f as Float: return .value(.double(Double(f)))
        case let b as Bool: return .value(.bool(b))
        case let d as Date: return .value(.date(d))
        case let d as Data: return .value(.data(d))
        case let u as UUID: return .value(.uuid(u))
        case let u as URL: return .value(.url(u))
        case let d as Decimal: return .value(.decimal(d))
        case let c as any AttributeValueConvertible: return .value(c.attributeValue)
        default: break
        }
        if let number = integer(value) { return .value(.integer(number)) }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .collection || mirror.displayStyle == .set {
            var items: [FormatValue] = []
            for child in mirror.children { items.append(try formatValue(child.value, format: format, position: position)) }
            return .list(items)
        }
        throw .invalidPredicateFormat(
            format: format, position: position,
            reason:
                "a %@ argument of type \(type(of: value)) cannot be used (strings, numbers, dates, data, UUIDs, URLs, decimals, arrays and sets of them, managed objects and object IDs can)"
        )
    }
}

/// Lets `formatValue` see through an `Optional` passed as `Any`.
protocol OptionalProtocol {
    var wrapped: Any? { get }
}

extension Optional: OptionalProtocol {
    var wrapped: Any? { self.map { $0 as Any } }
}
