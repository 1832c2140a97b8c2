import AmbarStack
import Foundation

/// What the predicate-format fuzzer checks for one input; shared by the libFuzzer target and the
/// replay test.
public enum PredicateFormatChecks {
    /// Arguments for the input's specifiers, in order: one of each kind a caller passes.
    static var arguments: [Any?] { ["text", 42, 2.5, ["a", "b"], Date(timeIntervalSinceReferenceDate: 0), nil, true, "name"] }

    /// Parses `bytes` (as UTF-8, invalid sequences replaced) as a format string with each prefix
    /// of ``arguments``, and substitutes every variable it uses. Parsing must give a predicate or
    /// ``AmbarError/invalidPredicateFormat(format:position:reason:)`` for this very format at a
    /// position inside it — never a trap or another error.
    ///
    /// Returns a description of the first broken property, or nil when all hold.
    public static func check(_ bytes: [UInt8]) -> String? {
        let format = String(decoding: bytes, as: UTF8.self)
        let length = format.unicodeScalars.count
        for count in [0, 1, 2, arguments.count] {
            do {
                let template = try PredicateTemplate(format: format, argumentArray: Array(arguments.prefix(count)))
                var values: [String: Any?] = [:]
                for name in template.variables { values[name] = name.count % 2 == 0 ? "value" : 7 }
                _ = try template.predicate(substituting: values)
            } catch {
                guard case .invalidPredicateFormat(let quoted, let position, let reason) = error else {
                    return "\(format.debugDescription) failed with \(error), not invalidPredicateFormat"
                }
                guard quoted == format else { return "the error quotes \(quoted.debugDescription), not the format" }
                guard (0...length).contains(position) else { return "position \(position) is outside the format (\(length) scalars)" }
                guard !reason.isEmpty else { return "an error without a reason" }
            }
        }
        return nil
    }
}
