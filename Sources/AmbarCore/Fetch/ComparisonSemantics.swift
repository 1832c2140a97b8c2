import Foundation

/// A value as SQLite stores and compares it. Predicates are evaluated on this form both in SQL and
/// in memory, which is what makes their results identical.
package enum StoredScalar: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The stored form of an attribute value.
    package init(_ value: AttributeValue) {
        switch value {
        case .null: self = .null
        case .string(let s): self = .text(s)
        case .integer(let v): self = .integer(v)
        case .double(let d): self = .real(d)
        case .bool(let b): self = .integer(b ? 1 : 0)
        case .date(let d): self = .real(d.timeIntervalSinceReferenceDate)
        case .data(let d): self = .blob(d)
        case .uuid(let u): self = .text(u.uuidString)
        case .url(let u): self = .text(u.absoluteString)
        case .decimal(let d): self = .text(d.description)
        }
    }

    /// The attribute value of `type` that this stored form stands for; `nil` when it does not fit.
    package func attributeValue(_ type: AttributeType) -> AttributeValue? {
        switch (self, type) {
        case (.null, _): return .null
        case (.text(let s), .string): return .string(s)
        case (.integer(let v), .integer16), (.integer(let v), .integer32), (.integer(let v), .integer64):
            return .integer(v)
        case (.real(let d), .integer16), (.real(let d), .integer32), (.real(let d), .integer64):
            return d.rounded() == d ? .integer(Int64(d)) : nil
        case (.real(let d), .double), (.real(let d), .float): return .double(d)
        case (.integer(let v), .double), (.integer(let v), .float): return .double(Double(v))
        case (.integer(let v), .boolean): return .bool(v != 0)
        case (.real(let d), .date): return .date(Date(timeIntervalSinceReferenceDate: d))
        case (.integer(let v), .date): return .date(Date(timeIntervalSinceReferenceDate: Double(v)))
        case (.blob(let d), .binary), (.blob(let d), .transformable): return .data(d)
        case (.text(let s), .uuid): return UUID(uuidString: s).map { .uuid($0) }
        case (.text(let s), .uri): return URL(string: s).map { .url($0) }
        case (.text(let s), .decimal): return Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        case (.integer(let v), .decimal): return .decimal(Decimal(v))
        case (.real(let d), .decimal): return .decimal(Decimal(d))
        default: return nil
        }
    }

    /// SQLite's ordering of storage classes: NULL, numbers, text, blob.
    private var classRank: Int {
        switch self {
        case .null: return 0
        case .integer, .real: return 1
        case .text: return 2
        case .blob: return 3
        }
    }

    /// Compares like SQLite's BINARY collation; `nil` never happens (NULL sorts first).
    static func order(_ a: StoredScalar, _ b: StoredScalar) -> Int {
        let ra = a.classRank
        let rb = b.classRank
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.null, .null): return 0
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.integer(let x), .real(let y)): return compareNumbers(Double(x), y)
        case (.real(let x), .integer(let y)): return compareNumbers(x, Double(y))
        case (.real(let x), .real(let y)): return compareNumbers(x, y)
        case (.text(let x), .text(let y)): return TextSemantics.compareBytes(x, y)
        case (.blob(let x), .blob(let y)):
            for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        default: return 0
        }
    }

    private static func compareNumbers(_ x: Double, _ y: Double) -> Int {
        x < y ? -1 : (x > y ? 1 : 0)
    }
}

/// Text comparison rules shared by the SQL functions a store registers and in-memory evaluation.
package enum TextSemantics {
    /// Folds text for case- and diacritic-insensitive comparison.
    package static func fold(_ s: String, _ options: TextOptions) -> String {
        if options.isEmpty { return s }
        var opts: String.CompareOptions = []
        if options.contains(.caseInsensitive) { opts.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { opts.insert(.diacriticInsensitive) }
        var folded = s.folding(options: opts, locale: nil)
        if options.contains(.caseInsensitive) { folded = folded.lowercased() }
        return folded
    }

    /// Byte-wise comparison of the UTF-8 forms (SQLite's BINARY collation).
    package static func compareBytes(_ a: String, _ b: String) -> Int {
        var i = a.utf8.makeIterator()
        var j = b.utf8.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }

    /// Whether `value` satisfies the text operation with `pattern`.
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` when a `MATCHES` pattern runs away on this
    ///   value (see ``RegularExpressions/wholeMatch(_:in:caseInsensitive:)``). `LIKE` and the other
    ///   operators cannot: their cost is at most the product of the two lengths.
    package static func matches(_ op: TextOperator, _ value: String, _ pattern: String, _ options: TextOptions) throws(AmbarError) -> Bool {
        let v = Array(fold(value, options).unicodeScalars)
        switch op {
        case .like:
            return wildcardMatch(v, Array(pattern.unicodeScalars), options)
        case .beginsWith:
            let p = Array(fold(pattern, options).unicodeScalars)
            return v.starts(with: p)
        case .endsWith:
            let p = Array(fold(pattern, options).unicodeScalars)
            return v.count >= p.count && Array(v[(v.count - p.count)...]) == p
        case .matches:
            return try RegularExpressions.wholeMatch(
                pattern, in: fold(value, options.subtracting(.caseInsensitive)), caseInsensitive: options.contains(.caseInsensitive))
        case .contains:
            let p = Array(fold(pattern, options).unicodeScalars)
            if p.isEmpty { return true }
            if p.count > v.count { return false }
            for start in 0...(v.count - p.count) where v[start] == p[0] {
                if Array(v[start..<(start + p.count)]) == p { return true }
            }
            return false
        }
    }

    /// Matches `*` (any run), `?` (one scalar) and `\x` (literal x); literals are folded with options.
    private static func wildcardMatch(_ value: [Unicode.Scalar], _ rawPattern: [Unicode.Scalar], _ options: TextOptions) -> Bool {
        enum Token: Equatable { case any, one, literal([Unicode.Scalar]) }
        var tokens: [Token] = []
        var i = 0
        while i < rawPattern.count {
            let c = rawPattern[i]
            if c == "*" {
                if tokens.last != .any { tokens.append(.any) }
            } else if c == "?" {
                tokens.append(.one)
            } else {
                var literal = c
                if c == "\\", i + 1 < rawPattern.count {
                    i += 1
                    literal = rawPattern[i]
                }
                let folded = Array(fold(String(Character(literal)), options).unicodeScalars)
                tokens.append(.literal(folded))
            }
            i += 1
        }
        // Expand literal tokens into single-scalar steps.
        enum Step: Equatable { case any, one, scalar(Unicode.Scalar) }
        var steps: [Step] = []
        for t in tokens {
            switch t {
            case .any: steps.append(.any)
            case .one: steps.append(.one)
            case .literal(let scalars): steps.append(contentsOf: scalars.map { .scalar($0) })
            }
        }
        // Classic greedy match with backtracking to the last star.
        var v = 0
        var s = 0
        var starStep = -1
        var starValue = 0
        while v < value.count {
            if s < steps.count {
                switch steps[s] {
                case .one:
                    v += 1
                    s += 1
                    continue
                case .scalar(let x) where x == value[v]:
                    v += 1
                    s += 1
                    continue
                case .any:
                    starStep = s
                    starValue = v
                    s += 1
                    continue
                default: break
                }
            }
            if starStep >= 0 {
                s = starStep + 1
                starValue += 1
                v = starValue
            } else {
                return false
            }
        }
        while s < steps.count, steps[s] == .any { s += 1 }
        return s == steps.count
    }

    /// Orders two decimals given as stored text; `nil` when either is not a decimal.
    package static func compareDecimalText(_ a: String, _ b: String) -> Int? {
        let posix = Locale(identifier: "en_US_POSIX")
        guard let x = Decimal(string: a, locale: posix), let y = Decimal(string: b, locale: posix) else { return nil }
        return x < y ? -1 : (x > y ? 1 : 0)
    }
}
