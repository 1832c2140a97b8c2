import Foundation

/// An attribute's validation rules, as Core Data's model editor sets them: bounds on a number or
/// a date, bounds on the length of a string or of binary data, and a regular expression that a
/// string must match whole.
///
/// A save checks every inserted and changed object against the rules of its attributes. When a
/// value breaks one, the save throws ``AmbarError/validation(object:property:reason:)`` naming
/// the object, the attribute and the rule, and writes nothing. A `nil` value is not checked
/// (whether it is allowed is the attribute's optionality), as in Core Data.
///
/// ```swift
/// EntityDescription("Employee", properties: [
///     .attribute("age", .integer16, validation: AttributeValidation(minimum: 16, maximum: 99)),
///     .attribute("code", .string, validation: AttributeValidation(minimum: 3, maximum: 8, regularExpression: "[A-Z0-9]+")),
/// ])
/// ```
///
/// Models read from Xcode's files take `minValueString`, `maxValueString`,
/// `minDateTimeInterval`, `maxDateTimeInterval` and `regularExpressionString`; JSON models take
/// `minimum`, `maximum` and `regularExpression`. The rules are not part of the model's
/// ``ManagedObjectModel/versionHash`` (as in Core Data): changing them needs no migration.
public struct AttributeValidation: Sendable, Hashable, Codable {
    /// The smallest value allowed, inclusive. For numeric attributes a number, for dates a date;
    /// for strings the fewest characters (UTF-16 code units, as Core Data counts them) and for
    /// binary data the fewest bytes.
    public var minimum: AttributeValue?
    /// The largest value allowed, inclusive, in the same terms as ``minimum``.
    public var maximum: AttributeValue?
    /// A regular expression (ICU syntax, as `MATCHES`) that a string value must match whole.
    public var regularExpression: String?

    /// Rules with the given bounds and pattern; none by default.
    public init(minimum: (any AttributeValueConvertible)? = nil, maximum: (any AttributeValueConvertible)? = nil, regularExpression: String? = nil) {
        self.minimum = minimum?.attributeValue
        self.maximum = maximum?.attributeValue
        self.regularExpression = regularExpression
    }

    /// Whether there is no rule at all.
    public var isEmpty: Bool { minimum == nil && maximum == nil && regularExpression == nil }

    /// Whether the bounds are lengths (strings and binary data) rather than values.
    package static func boundsAreLengths(_ type: AttributeType) -> Bool { type == .string || type == .binary }

    /// Why `value` breaks a rule, for the validation error; nil when it keeps them all.
    func violation(of value: AttributeValue, type: AttributeType) -> String? {
        if value.isNull { return nil }
        if Self.boundsAreLengths(type) {
            let length: Int64
            switch value {
            case .string(let s): length = Int64(s.utf16.count)
            case .data(let d): length = Int64(d.count)
            default: return nil
            }
            let unit = type == .string ? "characters" : "bytes"
            if case .integer(let low)? = minimum, length < low { return "it is \(length) \(unit) long; the model requires at least \(low)" }
            if case .integer(let high)? = maximum, length > high { return "it is \(length) \(unit) long; the model allows at most \(high)" }
        } else {
            if let minimum, PredicateEvaluation.compare(value, .less, minimum, type, []) {
                return "it is \(Self.describe(value)), below the model's minimum \(Self.describe(minimum))"
            }
            if let maximum, PredicateEvaluation.compare(value, .greater, maximum, type, []) {
                return "it is \(Self.describe(value)), above the model's maximum \(Self.describe(maximum))"
            }
        }
        if let pattern = regularExpression, case .string(let s) = value {
            do throws(AmbarError) {
                if try !RegularExpressions.wholeMatch(pattern, in: s, caseInsensitive: false) {
                    return "\"\(s)\" does not match the model's regular expression \(pattern)"
                }
            } catch {
                // Not saved as if it matched: the value could not be checked in time.
                return "it could not be checked against the model's regular expression \(pattern): \(error.description)"
            }
        }
        return nil
    }

    /// The problem with these rules on an attribute of `type`, for the model's validation; nil
    /// when they fit it.
    func problem(for type: AttributeType) -> String? {
        if Self.boundsAreLengths(type) {
            for bound in [minimum, maximum].compactMap({ $0 }) {
                guard case .integer(let n) = bound, n >= 0 else {
                    return "its length bounds must be whole numbers of zero or more, not \(Self.describe(bound))"
                }
            }
        } else if minimum != nil || maximum != nil {
            guard type.isInteger || [.double, .float, .decimal, .date].contains(type) else {
                return "a \(type.rawValue) attribute cannot have a minimum or a maximum"
            }
            for bound in [minimum, maximum].compactMap({ $0 }) where bound.coerced(to: type) == nil {
                return "its bound \(Self.describe(bound)) is not \(type.withArticle)"
            }
        }
        if case .integer(let low)? = minimum.flatMap({ Self.boundsAreLengths(type) ? $0 : nil }),
            case .integer(let high)? = maximum.flatMap({ Self.boundsAreLengths(type) ? $0 : nil }), low > high
        {
            return "its minimum length \(low) is above its maximum \(high)"
        }
        if !Self.boundsAreLengths(type), let low = minimum?.coerced(to: type), let high = maximum?.coerced(to: type),
            PredicateEvaluation.compare(low, .greater, high, type, [])
        {
            return "its minimum \(Self.describe(low)) is above its maximum \(Self.describe(high))"
        }
        if let pattern = regularExpression {
            guard type == .string else { return "a \(type.rawValue) attribute cannot have a regular expression (strings only)" }
            if RegularExpressions.problem(with: pattern) != nil { return "its regular expression \(pattern) is not valid ICU syntax" }
        }
        return nil
    }

    /// These rules with their value bounds in the attribute's own type (an integer bound of a
    /// double attribute becomes a double), so comparisons need no conversion.
    func coerced(to type: AttributeType) -> AttributeValidation {
        guard !Self.boundsAreLengths(type) else { return self }
        var rules = self
        rules.minimum = minimum.map { $0.coerced(to: type) ?? $0 }
        rules.maximum = maximum.map { $0.coerced(to: type) ?? $0 }
        return rules
    }

    private static func describe(_ value: AttributeValue) -> String {
        switch value {
        case .integer(let n): return "\(n)"
        case .double(let d): return "\(d)"
        case .decimal(let d): return "\(d)"
        case .date(let date): return ISO8601DateFormatter().string(from: date)
        case .string(let s): return "\"\(s)\""
        default: return "\(value)"
        }
    }
}
