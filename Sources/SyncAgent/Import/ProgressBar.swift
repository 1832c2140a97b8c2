import Foundation

/// A one-line progress bar with rate and ETA on standard error — only when standard error is a
/// terminal; silent otherwise (pipes, files, the journal).
final class ProgressBar {
    private let enabled = isatty(STDERR_FILENO) == 1
    private let started = ContinuousClock.now
    private var lastDraw: ContinuousClock.Instant?

    /// Redraws (at most ten times a second unless `force`) for `lines` done and `bytes` of `total`.
    func update(lines: Int, bytes: Int, total: Int?, force: Bool = false) {
        let now = ContinuousClock.now
        guard enabled, force || lastDraw.map({ now - $0 >= .milliseconds(100) }) ?? true else { return }
        lastDraw = now
        let elapsed = max((now - started).inSeconds, 0.001)
        let rate = Double(lines) / elapsed
        var text = "\(lines.formatted()) lines  \(Int(rate).formatted())/s"
        if let total, total > 0 {
            let fraction = min(1, Double(bytes) / Double(total))
            let width = 24
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let remaining = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0
            text = "\(bar) \(Int(fraction * 100))%  " + text + "  ETA \(Self.clock(remaining))"
        }
        write("\r\u{1B}[2K" + text)
    }

    /// Clears the bar.
    func finish() {
        guard enabled else { return }
        write("\r\u{1B}[2K")
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    private static func clock(_ seconds: TimeInterval) -> String {
        let total = Int(seconds.rounded())
        return String(format: "%d:%02d", total / 60, total % 60)
    }
}
