import Foundation

/// How large the heaviest multi-process scenarios run: full size normally; a fifth under
/// ThreadSanitizer (`scripts/run-tsan` sets `AMBAR_TSAN`), whose instrumented processes run
/// several times slower — the same scenario, fewer repetitions of it.
public enum TestScale {
    public static var isReduced: Bool { ProcessInfo.processInfo.environment["AMBAR_TSAN"] != nil }

    /// `count`, or a fifth of it (at least 20) under ThreadSanitizer.
    public static func count(_ count: Int) -> Int { isReduced ? max(20, count / 5) : count }
}
