import AmbarCore
import AmbarDataStack
import AmbarResults
import Logging

/// One context on a shared persistence, with typed collections (BBLCoreDataKit's `BBLStack`):
/// typically a main-queue stack for the UI and a private-queue stack for imports, both on one
/// ``SharedPersistence`` and merged into each other.
open class ContextStack: @unchecked Sendable {
    /// The shared persistence.
    public let persistence: SharedPersistence
    /// The stack's context.
    public let context: ManagedObjectContext
    private let logger = Logger(label: "ambar.stack.context-stack")

    /// A stack with a new root context registered on `persistence` (the store opens now if it
    /// is not open yet).
    public init(persistence: SharedPersistence, concurrencyType: ManagedObjectContext.ConcurrencyType, mergePolicy: MergePolicy = .error) throws(AmbarError) {
        self.persistence = persistence
        self.context = try persistence.addContext(concurrencyType: concurrencyType, mergePolicy: mergePolicy)
    }

    /// A child stack: its context is a child of `parentStack`'s, not registered for merges; its
    /// saves land in the parent, unsaved.
    public init(parentStack: ContextStack, concurrencyType: ManagedObjectContext.ConcurrencyType, mergePolicy: MergePolicy = .error) {
        self.persistence = parentStack.persistence
        self.context = parentStack.persistence.addChildContext(for: parentStack.context, concurrencyType: concurrencyType, mergePolicy: mergePolicy)
    }

    /// Stops merges into this stack's context (BBL's `deinitialize()`).
    public func deinitialize() { persistence.removeContext(context) }

    /// Runs `block` on the context's queue and waits.
    public func performAndWait<T, E: Error>(_ block: () throws(E) -> T) throws(E) -> T { try context.performAndWait(block) }

    /// Runs `block` on the context's queue without waiting.
    public func perform(_ block: @escaping @Sendable () -> Void) { context.enqueue(block) }

    /// A typed collection of `T` in this stack's context.
    public func collection<T: StringIdentified>(_ type: T.Type) -> ObjectCollection<T> { ObjectCollection(context: context) }

    /// Saves the context when it has changes. A failure is logged with `site` and thrown tagged
    /// with it (BBL's `save(site:)` printed and swallowed it). Call it on the context's queue.
    public func save(site: String = #function, file: String = #fileID, line: Int = #line) throws(SiteTaggedError) {
        do throws(AmbarError) {
            guard context.hasChanges else { return }
            try context.save()
        } catch {
            logger.error("save failed", metadata: ["site": "\(site)", "code": "\(file):\(line)", "error": "\(error)"])
            throw SiteTaggedError(site: site, operation: "save", error: error)
        }
    }
}

/// An error tagged with the call site that hit it (`save(site:)`, `fetch(site:)`).
public struct SiteTaggedError: Error, CustomStringConvertible, Equatable {
    /// The site the caller named.
    public let site: String
    /// `save` or `fetch`.
    public let operation: String
    /// What went wrong.
    public let error: AmbarError

    public var description: String { "\(site): \(operation) failed: \(error)" }
}

extension FetchedResultsController {
    /// ``performFetch()``, with a failure logged and thrown tagged with `site` (BBL's
    /// `fetch(site:)` printed and swallowed it).
    public func fetch(site: String = #function) throws(SiteTaggedError) {
        do throws(AmbarError) {
            try performFetch()
        } catch {
            Logger(label: "ambar.stack.results").error("fetch failed", metadata: ["site": "\(site)", "error": "\(error)"])
            throw SiteTaggedError(site: site, operation: "fetch", error: error)
        }
    }
}
