import AmbarStack
import Foundation
import SharedStoreIPC

/// A durable consumer of a shared store's history, with SwiftData's types: each transaction
/// of the other processes reaches your handler once, as a ``DefaultHistoryTransaction``, with
/// a ``ModelContext`` to read and insert models in; what the handler changes is saved together
/// with the consumer's position, in one store transaction (Ambar's `ChangeConsumer`).
///
/// ```swift
/// let container = try ModelContainer(for: Reading.self, Alert.self, configurations: ModelConfiguration(sharedDirectory: shared))
/// let alerter = try ModelChangeConsumer(name: "alerter", container: container)
/// try await alerter.process { transaction, context in
///     for case .insert(let insert as DefaultHistoryInsert<Reading>) in transaction.changes {
///         guard let reading = context.model(for: insert.changedPersistentIdentifier) as? Reading, reading.value > 40 else { continue }
///         context.insert(Alert(sensor: reading.sensor, value: reading.value))
///     }
/// }   // runs until the task is cancelled or `alerter.stop()`
/// ```
///
/// The consumer resumes after its recorded position when the process starts again, so
/// transactions committed while it was down are delivered too; killed at any point, it either
/// saved a transaction's effects with its position, or neither, and handles it again. Two
/// processes running the same consumer never both apply a transaction. The handler must not
/// call ``ModelContext/save()`` (it throws: the consumer saves), and a failure it could not
/// throw (an insert of a model outside the schema, a property that could not be written) ends
/// ``process(reconcile:_:)`` with that error, nothing of the batch saved.
public final class ModelChangeConsumer: Sendable {
    /// How the consumer reads and delivers (Ambar's `ChangeConsumer.Options`): batch size, where
    /// a consumer without a recorded position starts, how often it reads the ledger.
    public typealias Options = ChangeConsumer.Options

    /// The container whose store the consumer reads.
    public let container: ModelContainer
    /// The Ambar consumer underneath (its name, options and position).
    public let consumer: ChangeConsumer

    /// A consumer named `name` on the store `container` shares.
    ///
    /// - Throws: ``SwiftDataError`` (``SwiftDataError/Code/loadIssueModelContainer``) when the
    ///   container does not share its store (give its configuration a shared directory), or with
    ///   the `AmbarError` of a name or options out of range.
    public init(name: String, container: ModelContainer, options: Options = Options()) throws {
        guard let sharing = container.sharing else {
            throw SwiftDataError(
                .loadIssueModelContainer,
                "consumer '\(name)' needs a container that shares its store: make it with ModelConfiguration(sharedDirectory:) or a sharing: configuration")
        }
        self.container = container
        do {
            consumer = try ChangeConsumer(name: name, sharing: sharing, options: options)
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, "consumer '\(name)' cannot be made", cause: error)
        }
    }

    /// The consumer's name, under which its position is kept in the store.
    public var name: String { consumer.name }

    /// The position recorded in the store, as this process last read or wrote it (`nil` before
    /// the consumer first ran): the transactions through it are done.
    public var position: DefaultHistoryToken? {
        consumer.position.map { DefaultHistoryToken($0, store: container.coordinator.storeIdentifier) }
    }

    /// Delivers each transaction to `handler`, with a context of the consumer's, and saves what
    /// the handler changed together with the consumer's new position; runs until ``stop()`` or
    /// the task's cancellation.
    ///
    /// - Parameters:
    ///   - reconcile: Called when history the consumer had not processed was deleted (the
    ///     store's retention); what it changes is saved with the position moved to the history's
    ///     newest transaction. Without it, such a gap throws ``SwiftDataError/historyTokenExpired``.
    ///   - handler: Reacts to one transaction, on the context's queue. Read, insert, change and
    ///     delete models with the context given, and return.
    /// - Throws: The handler's error, a failure it recorded without throwing, or a
    ///   ``SwiftDataError`` with the store's error.
    public func process(
        reconcile: (@Sendable (HistoryExpiry, ModelContext) throws -> Void)? = nil,
        _ handler: @escaping @Sendable (DefaultHistoryTransaction, ModelContext) throws -> Void
    ) async throws {
        let container = self.container
        let store = container.coordinator.storeIdentifier
        var reconciling: (@Sendable (HistoryExpiry, ManagedObjectContext) throws -> Void)? = nil
        if let reconcile {
            reconciling = { (expiry: HistoryExpiry, managedContext: ManagedObjectContext) throws -> Void in
                try Self.run(in: managedContext, of: container) { context in try reconcile(expiry, context) }
            }
        }
        do {
            try await consumer.processBatches(reconcile: reconciling) { batch, managedContext in
                try Self.run(in: managedContext, of: container) { context in
                    for transaction in batch.transactions { try handler(container.historyTransaction(transaction, store: store), context) }
                }
            }
        } catch AmbarError.historyExpired {
            throw SwiftDataError.historyTokenExpired
        }
    }

    /// Runs `body` with a model context over the consumer's context (made for this batch: the
    /// consumer resets its context after each), and throws a failure recorded without throwing.
    private static func run(in managedContext: ManagedObjectContext, of container: ModelContainer, _ body: (ModelContext) throws -> Void) throws {
        let context = ModelContext(container: container, wrapping: managedContext, autosaves: false)
        try body(context)
        if let failure = context.failures.takeFirst() {
            throw SwiftDataError(
                .saveFailed, "a change of the consumer's handler failed (\(failure.what)); nothing of the batch was saved", cause: failure.error)
        }
    }

    /// Ends ``process(reconcile:_:)`` after the batch in hand (its save, if any, completes).
    public func stop() { consumer.stop() }
}
