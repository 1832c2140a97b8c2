import Foundation

/// An aggregate over the destinations of a to-many relationship, as `NSPredicate` writes it
/// (`employees.@sum.salary`, `tags.@count`), for predicates and derived attributes.
///
/// Over no objects: `@count` and `@sum` are 0, `@avg`, `@min` and `@max` are `nil` (so any
/// comparison with them but `== nil` is false). `nil` values are skipped.
public enum AggregateFunction: String, Sendable, Hashable, Codable, CaseIterable {
    /// The number of objects.
    case count
    /// The sum of the attribute (integer when the attribute is an integer, else double).
    case sum
    /// The mean of the attribute, as a double.
    case avg
    /// The smallest value.
    case min
    /// The largest value.
    case max

    /// Applies the aggregate to the values of one attribute over the destinations.
    func apply(to values: [AttributeValue], type: AttributeType? = nil) -> AttributeValue {
        let present = values.filter { !$0.isNull }
        switch self {
        case .count:
            return .integer(Int64(values.count))
        case .sum:
            if present.allSatisfy({ if case .integer = $0 { return true } else { return false } }) {
                var total: Int64 = 0
                for case .integer(let v) in present { total &+= v }
                return .integer(total)
            }
            return .double(present.compactMap(Self.number).reduce(0, +))
        case .avg:
            let numbers = present.compactMap(Self.number)
            return numbers.isEmpty ? .null : .double(numbers.reduce(0, +) / Double(numbers.count))
        case .min, .max:
            guard var best = present.first else { return .null }
            for value in present.dropFirst() {
                let c = StoredScalar.order(StoredScalar(value), StoredScalar(best))
                if (self == .min && c < 0) || (self == .max && c > 0) { best = value }
            }
            return best
        }
    }

    static func number(_ value: AttributeValue) -> Double? {
        switch value {
        case .integer(let v): return Double(v)
        case .double(let d): return d
        case .bool(let b): return b ? 1 : 0
        case .decimal(let d): return NSDecimalNumber(decimal: d).doubleValue
        default: return nil
        }
    }
}
