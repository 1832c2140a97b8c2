import CoreMetrics

/// What AmbarStack reports through swift-metrics: saves, their duration and their failures.
///
/// Nothing is recorded unless the process bootstraps a metrics backend
/// (`MetricsSystem.bootstrap`), before its first save; without one the handles are swift-metrics'
/// no-op handlers. `sync-agent … --metrics ADDRESS` bootstraps Prometheus. The names, units and
/// meaning of every metric are listed in `docs/metrics.md`.
enum StoreMetrics {
    /// Saves that reached the store and committed.
    static let saves = Counter(label: "ambar_saves_total")
    /// Saves the store refused or failed (conflicts, constraints, storage errors).
    static let saveFailures = Counter(label: "ambar_save_failures_total")
    /// Objects inserted, updated or deleted by committed saves.
    static let savedObjects = Counter(label: "ambar_saved_objects_total")
    /// How long the store took to commit a save (the transaction, not the context's work).
    static let saveDuration = Timer(label: "ambar_save_duration_seconds")

    /// Records a committed save of `objects` objects that took `duration`.
    static func saved(objects: Int, duration: Duration) {
        saves.increment()
        savedObjects.increment(by: objects)
        saveDuration.recordNanoseconds(duration.nanoseconds)
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ attoseconds / 1_000_000_000
    }
}
