/// Exponential backoff with jitter: each delay doubles up to a maximum, and each is drawn between
/// half and all of its step, so processes refused together do not retry together.
struct Backoff: Sendable {
    let initial: Duration
    let maximum: Duration
    private var step: Duration

    /// Delays from `initial`, doubling, never above `maximum`.
    init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = maximum
        self.step = initial
    }

    /// The next delay.
    mutating func next() -> Duration {
        let current = step
        step = min(step * 2, maximum)
        return current * Double.random(in: 0.5...1.0)
    }

    /// Back to the initial delay (after a success).
    mutating func reset() { step = initial }
}
