/// How a comparison compares.
public enum ComparisonOperator: String, Sendable, Hashable, Codable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// A text operation of a predicate.
public enum TextOperator: String, Sendable, Hashable, Codable {
    /// The value starts with the pattern.
    case beginsWith
    /// The value contains the pattern.
    case contains
    /// The value ends with the pattern.
    case endsWith
    /// The value matches a wildcard pattern: `*` matches any run of characters, `?` one character,
    /// and `\` makes the next character literal.
    case like
    /// The whole value matches an ICU regular expression (`NSPredicate`'s `MATCHES`). With
    /// ``TextOptions/caseInsensitive`` the expression ignores case; with
    /// ``TextOptions/diacriticInsensitive`` the value's diacritics are removed first. An
    /// expression that does not compile matches nothing.
    case matches
}

/// How a condition on a key path that crosses a to-many relationship applies to its destinations.
public enum Quantifier: String, Sendable, Hashable, Codable {
    /// At least one destination matches (`ANY`, `SOME`; also what a bare key path through a
    /// to-many relationship means).
    case any
    /// Every destination matches (`ALL`); true when there are none.
    case all
    /// No destination matches (`NONE`).
    case none
}

/// Options for text comparisons.
public struct TextOptions: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Compare ignoring case (Unicode case folding, not just ASCII).
    public static let caseInsensitive = TextOptions(rawValue: 1)
    /// Compare ignoring diacritics ("é" matches "e").
    public static let diacriticInsensitive = TextOptions(rawValue: 2)
}
