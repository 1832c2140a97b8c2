import Foundation

/// Compiled ICU regular expressions for `MATCHES`, cached by pattern: SQL evaluates a predicate
/// once per row, so each pattern is compiled once, not once per row.
package enum RegularExpressions {
    private struct Key: Hashable {
        let pattern: String
        let caseInsensitive: Bool
    }

    /// `NSRegularExpression` is immutable after creation and documented as safe to use from
    /// several threads.
    private struct Compiled: @unchecked Sendable {
        /// The pattern wrapped to match whole values, or the reason the pattern does not compile.
        let outcome: Result<NSRegularExpression, AmbarError>
    }

    private static let cache = Locked<[Key: Compiled]>([:])
    private static let capacity = 256

    /// The compiled expression, or the reason it does not compile (ICU's message).
    private static func compile(_ pattern: String, caseInsensitive: Bool) -> Result<NSRegularExpression, AmbarError> {
        do {
            // An empty pattern matches the empty string (Foundation refuses to compile it).
            return .success(try NSRegularExpression(pattern: pattern.isEmpty ? "(?:)" : pattern, options: caseInsensitive ? [.caseInsensitive] : []))
        } catch {
            // Foundation on Linux describes every ICU failure alike, so the message names the pattern.
            return .failure(.invalidPredicate("'\(pattern)' is not a valid ICU regular expression"))
        }
    }

    /// Why `pattern` does not compile, or nil when it does. Goes through the cache: Foundation
    /// leaks a little memory for each pattern that fails to compile, so each is tried once.
    static func problem(with pattern: String) -> AmbarError? {
        if case .failure(let problem) = cached(pattern, caseInsensitive: false).outcome { return problem }
        return nil
    }

    /// How long one value may take to match. A pattern with nested repetition (`(a+)+b`)
    /// backtracks exponentially in the length of a value that almost matches: about a second per
    /// value of 28 characters, doubling with each one more. ICU reports its progress while it
    /// matches, and the match is abandoned once this much time has passed.
    package static let timeLimitMilliseconds = 100
    private static var timeLimit: Duration { .milliseconds(timeLimitMilliseconds) }

    /// The start of the reason a match that ran out of time gives (``timeLimitMilliseconds``): SQLite passes
    /// the reason through as its message, and the store knows it by this.
    package static let runawayMarker = "MATCHES gave up on a value"

    /// Whether `pattern` matches the whole of `value` (`MATCHES`); false when it does not compile.
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` when one value takes longer than
    ///   ``timeLimitMilliseconds``: the pattern backtracks without bound, and the query is refused rather than
    ///   left to hold its thread for hours.
    static func wholeMatch(_ pattern: String, in value: String, caseInsensitive: Bool) throws(AmbarError) -> Bool {
        guard case .success(let expression) = cached(pattern, caseInsensitive: caseInsensitive).outcome else { return false }
        let range = NSRange(value.startIndex..<value.endIndex, in: value)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeLimit)
        var matched = false
        var gaveUp = false
        expression.enumerateMatches(in: value, options: [.anchored, .reportProgress], range: range) { result, _, stop in
            if result != nil {
                matched = true
                stop.pointee = true
            } else if clock.now >= deadline {
                gaveUp = true
                stop.pointee = true
            }
        }
        if gaveUp, !matched {
            throw .invalidPredicate(
                "\(runawayMarker) of \(value.count) characters after \(timeLimitMilliseconds) ms: '\(pattern)' backtracks without bound (nested repetition such as (a+)+); write it without a repetition inside a repetition"
            )
        }
        return matched
    }

    private static func cached(_ pattern: String, caseInsensitive: Bool) -> Compiled {
        let key = Key(pattern: pattern, caseInsensitive: caseInsensitive)
        return cache.withLock { cached -> Compiled in
            if let found = cached[key] { return found }
            // The pattern must compile on its own; it is then wrapped so that any match found from
            // the start is a match of the whole value (ICU's `matches`, with backtracking).
            let made = Compiled(
                outcome: compile(pattern, caseInsensitive: caseInsensitive).flatMap { _ in
                    compile("(?:\(pattern))\\z", caseInsensitive: caseInsensitive)
                })
            if cached.count >= capacity { cached.removeAll() }
            cached[key] = made
            return made
        }
    }
}
