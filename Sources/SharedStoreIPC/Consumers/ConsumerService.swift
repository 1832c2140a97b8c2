import AmbarCore
import AmbarDataStack
import ServiceLifecycle

/// A durable consumer's ``ChangeConsumer/process(reconcile:_:)`` loop as a swift-service-lifecycle
/// `Service`: it runs until the service group's graceful shutdown (SIGTERM, for a group that
/// listens for it), then finishes the batch in hand, records its position and returns.
///
/// ```swift
/// let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
/// let alerter = try ChangeConsumer(name: "alerter", sharing: sync)
/// let group = ServiceGroup(
///     services: [sync, alerter.service { transaction, context in /* … */ }],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()   // on SIGTERM: the consumer stops first, then sharing
/// ```
///
/// Services shut down in the reverse of their order in the group: list ``SharedStoreSync`` before
/// the consumers that use it.
public struct ConsumerService: Service {
    /// The consumer it runs.
    public let consumer: ChangeConsumer
    private let reconcile: (@Sendable (HistoryExpiry, ManagedObjectContext) throws -> Void)?
    private let handler: @Sendable (ChangeBatch, ManagedObjectContext) throws -> Void

    init(
        consumer: ChangeConsumer, reconcile: (@Sendable (HistoryExpiry, ManagedObjectContext) throws -> Void)?,
        handler: @escaping @Sendable (ChangeBatch, ManagedObjectContext) throws -> Void
    ) {
        self.consumer = consumer
        self.reconcile = reconcile
        self.handler = handler
    }

    /// Runs the consumer until graceful shutdown or cancellation.
    public func run() async throws {
        try await withGracefulShutdownHandler {
            try await consumer.processBatches(reconcile: reconcile, handler)
        } onGracefulShutdown: { [consumer] in
            consumer.stop()
        }
    }
}

extension ChangeConsumer {
    /// ``process(reconcile:_:)`` as a `Service`, for a `ServiceGroup`.
    public func service(
        reconcile: (@Sendable (HistoryExpiry, ManagedObjectContext) throws -> Void)? = nil,
        _ handler: @escaping @Sendable (HistoryTransaction, ManagedObjectContext) throws -> Void
    ) -> ConsumerService {
        ConsumerService(consumer: self, reconcile: reconcile) { batch, context in
            for transaction in batch.transactions { try handler(transaction, context) }
        }
    }

    /// ``processBatches(reconcile:_:)`` as a `Service`, for a `ServiceGroup`.
    public func batchService(
        reconcile: (@Sendable (HistoryExpiry, ManagedObjectContext) throws -> Void)? = nil,
        _ handler: @escaping @Sendable (ChangeBatch, ManagedObjectContext) throws -> Void
    ) -> ConsumerService {
        ConsumerService(consumer: self, reconcile: reconcile, handler: handler)
    }
}
