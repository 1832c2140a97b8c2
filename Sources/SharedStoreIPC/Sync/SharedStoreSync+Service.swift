import ServiceLifecycle

/// Sharing as a swift-service-lifecycle `Service`: in a `ServiceGroup`, it shares until the
/// group's graceful shutdown (SIGTERM, for a group that listens for it) or cancellation, then
/// stops sharing (``SharedStoreSync/stop()``) and returns.
///
/// ```swift
/// let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
/// let group = ServiceGroup(services: [sync, consumer.service(handle)], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// Services shut down in the reverse of their order in the group: list sharing first, so that the
/// consumers and servers that use it stop before it does.
extension SharedStoreSync: Service {
    /// Shares until graceful shutdown or cancellation, then stops sharing.
    public func run() async throws {
        // Returns at graceful shutdown; throws CancellationError when cancelled instead. Either
        // way sharing stops.
        try? await gracefulShutdown()
        await stop()
    }
}
