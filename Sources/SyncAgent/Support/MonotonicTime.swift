/// Intervals are measured on a monotonic clock (`ContinuousClock`), never on the wall clock,
/// which can jump; the wall clock is only for times shown to people and stored in the ledger.
extension Duration {
    /// The duration in seconds.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
