import AmbarStack
import Foundation

/// What runs a model actor's work: it owns the actor's context, and is the actor's serial
/// executor (SwiftData's `ModelExecutor`).
public protocol ModelExecutor: AnyObject, SerialExecutor {
    /// The context the actor works with.
    var modelContext: ModelContext { get }
}

/// A ``ModelExecutor`` that runs its jobs one at a time (SwiftData's `SerialModelExecutor`).
public protocol SerialModelExecutor: ModelExecutor {}

/// The executor `@ModelActor` gives an actor: the actor runs on its context's queue, so that
/// the context and its models are used there directly.
public final class DefaultSerialModelExecutor: SerialModelExecutor, @unchecked Sendable {  // the context is only used on its own queue
    /// The actor's context.
    public let modelContext: ModelContext

    /// An executor that runs jobs on `modelContext`'s queue.
    public init(modelContext: ModelContext) {
        self.modelContext = modelContext
    }

    /// Runs `job` on the context's queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        modelContext.managedContext.enqueue { job.runSynchronously(on: executor) }
    }

    /// Whether the caller runs on the context's queue.
    public func checkIsolated() {
        if !modelContext.managedContext.isOnQueue {
            ModelContext.logger.critical("a model actor's work ran off its context's queue")
        }
    }
}

/// An actor that works with a context of its own, on that context's queue: what `@ModelActor`
/// makes of an actor (SwiftData's `ModelActor`).
///
/// ```swift
/// @ModelActor actor Importer {
///     func add(_ names: [String]) throws {
///         for name in names { modelContext.insert(Trip(name: name, start: .now)) }
///         try modelContext.save()
///     }
/// }
/// ```
public protocol ModelActor: Actor {
    /// The container the actor's context works on.
    nonisolated var modelContainer: ModelContainer { get }
    /// The actor's executor, which owns its context.
    nonisolated var modelExecutor: any ModelExecutor { get }
}

extension ModelActor {
    /// The actor runs on its context's queue.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { modelExecutor.asUnownedSerialExecutor() }

    /// The actor's context.
    public var modelContext: ModelContext { modelExecutor.modelContext }

    /// The model with identifier `id` in the actor's context (SwiftData's subscript).
    public subscript<T: PersistentModel>(id: PersistentIdentifier, as type: T.Type) -> T? {
        modelContext.model(for: id) as? T
    }
}
