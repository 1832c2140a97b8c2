import AmbarCore
import ServiceLifecycle

/// A durable consumer's ``ChangeConsumer/deliverOutbox(retryDelay:maximumRetryDelay:_:)`` loop as a
/// swift-service-lifecycle `Service`: it sends the consumer's outbox until the service group's
/// graceful shutdown, which cancels the send in hand (that message stays in the outbox and is sent
/// again, with its key, at the next start).
///
/// ```swift
/// let mailer = try ChangeConsumer(name: "mailer", sharing: sync)
/// let group = ServiceGroup(
///     services: [
///         sync,
///         mailer.service { transaction, context in /* record messages */ },
///         mailer.outboxService { message in try await send(message.payload, key: message.key) },
///     ],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public struct OutboxDeliveryService: Service {
    /// The consumer whose outbox it sends.
    public let consumer: ChangeConsumer
    private let retryDelay: Duration
    private let maximumRetryDelay: Duration
    private let send: @Sendable (OutboxMessage) async throws -> Void

    init(consumer: ChangeConsumer, retryDelay: Duration, maximumRetryDelay: Duration, send: @escaping @Sendable (OutboxMessage) async throws -> Void) {
        self.consumer = consumer
        self.retryDelay = retryDelay
        self.maximumRetryDelay = maximumRetryDelay
        self.send = send
    }

    /// Sends the outbox until graceful shutdown or cancellation.
    public func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await consumer.deliverOutbox(retryDelay: retryDelay, maximumRetryDelay: maximumRetryDelay, send)
            }
        } catch is CancellationError {
            // The graceful shutdown's cancellation: not a failure.
        }
    }
}

extension ChangeConsumer {
    /// ``deliverOutbox(retryDelay:maximumRetryDelay:_:)`` as a `Service`, for a `ServiceGroup`.
    public func outboxService(
        retryDelay: Duration = .seconds(1), maximumRetryDelay: Duration = .seconds(60), _ send: @escaping @Sendable (OutboxMessage) async throws -> Void
    ) -> OutboxDeliveryService {
        OutboxDeliveryService(consumer: self, retryDelay: retryDelay, maximumRetryDelay: maximumRetryDelay, send: send)
    }
}
