import Foundation

/// Compiled ICU regular expressions for `MATCHES`, cached by pattern: SQL evaluates a predicate
/// once per row, so each pattern is compiled once, not once per row.
enum RegularExpressions {
    private struct Key: Hashable {
        let pattern: String
        let caseInsensitive: Bool
    }

    /// `NSRegularExpression` is immutable after creation and documented as safe to use from
    /// several threads.
    private struct Compiled: @unchecked Sendable {
        let expression: NSRegularExpression?
    }

    private static let cache = Locked<[Key: Compiled]>([:])
    private static let capacity = 256

    /// The compiled expression, or the reason it does not compile.
    static func compile(_ pattern: String, caseInsensitive: Bool = false) -> Result<NSRegularExpression, AmbarError> {
        do {
            // An empty pattern matches the empty string (Foundation refuses to compile it).
            return .success(try NSRegularExpression(pattern: pattern.isEmpty ? "(?:)" : pattern, options: caseInsensitive ? [.caseInsensitive] : []))
        } catch {
            return .failure(.invalidPredicate("'\(pattern)' is not a valid ICU regular expression"))
        }
    }

    /// Why `pattern` does not compile, or nil when it does. Goes through the cache: Foundation
    /// leaks a little memory for each pattern that fails to compile, so each is tried once.
    static func problem(with pattern: String) -> AmbarError? {
        cached(pattern, caseInsensitive: false).expression == nil
            ? .invalidPredicate("'\(pattern)' is not a valid ICU regular expression") : nil
    }

    /// Whether `pattern` matches the whole of `value` (`MATCHES`); false when it does not compile.
    static func wholeMatch(_ pattern: String, in value: String, caseInsensitive: Bool) -> Bool {
        guard let expression = cached(pattern, caseInsensitive: caseInsensitive).expression else { return false }
        let range = NSRange(value.startIndex..<value.endIndex, in: value)
        return expression.firstMatch(in: value, options: [.anchored], range: range) != nil
    }

    private static func cached(_ pattern: String, caseInsensitive: Bool) -> Compiled {
        let key = Key(pattern: pattern, caseInsensitive: caseInsensitive)
        let compiled = cache.withLock { cached -> Compiled in
            if let found = cached[key] { return found }
            // The pattern must compile on its own; it is then wrapped so that any match found from
            // the start is a match of the whole value (ICU's `matches`, with backtracking).
            let valid = (try? compile(pattern, caseInsensitive: caseInsensitive).get()) != nil
            let made = Compiled(expression: valid ? try? compile("(?:\(pattern))\\z", caseInsensitive: caseInsensitive).get() : nil)
            if cached.count >= capacity { cached.removeAll() }
            cached[key] = made
            return made
        }
        return compiled
    }
}
