import ServiceLifecycle

/// The worker as a swift-service-lifecycle `Service` of `sync-agent run`'s group: it imports
/// (on its thread, started before the group's READY=1: readiness means the inbox is watched)
/// until the group's graceful shutdown or cancellation, then finishes the file in progress,
/// calls `onStopped`, and returns.
struct InboxWorkerService: Service {
    let worker: InboxWorker
    /// Called once the worker has stopped (what lives as long as the imports: observations).
    let onStopped: @Sendable () -> Void

    func run() async throws {
        try? await gracefulShutdown()  // try?: it throws only when cancelled, which also means stop
        FaultInjection.hang("while-stopping")
        await worker.stop()
        onStopped()
    }
}
