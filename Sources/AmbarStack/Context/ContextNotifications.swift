import Foundation
import Synchronization

/// Identifies a context without holding it; `Sendable`, so notifications can carry it.
public struct ContextIdentifier: Sendable, Hashable, CustomStringConvertible {
    let raw: UInt64
    private static let counter = Atomic<UInt64>(0)
    static func next() -> ContextIdentifier { ContextIdentifier(raw: counter.add(1, ordering: .relaxed).newValue) }
    public var description: String { "context#\(raw)" }
}

/// Posted after a context saved: what it inserted, updated and deleted.
///
/// A root context posts it after its transaction committed (the IDs are permanent); a child
/// context after its changes moved into its parent.
public struct DidSaveNotification: Sendable {
    /// The saving context.
    public let context: ContextIdentifier
    /// The saving context's name, if any.
    public let contextName: String?
    /// The saving context's transaction author, if any.
    public let author: String?
    /// The coordinator of the saving context (of its root, for a child).
    public let coordinator: CoordinatorIdentifier
    /// The parent the save went into; `nil` when the save went to the store.
    public let parent: ContextIdentifier?
    /// Objects inserted.
    public let inserted: Set<ManagedObjectID>
    /// Objects updated.
    public let updated: Set<ManagedObjectID>
    /// Objects deleted.
    public let deleted: Set<ManagedObjectID>
    /// The ledger token of the transaction, for saves that reached the store.
    public let token: Int64?
    /// Whether a batch operation (``ManagedObjectContext/batchUpdate(_:set:)`` and the like)
    /// wrote the transaction, rather than a context's save.
    public let isBatch: Bool

    /// Creates a notification describing a save made elsewhere (for example by another process),
    /// to pass to ``ManagedObjectContext/mergeChanges(fromContextDidSave:)``.
    public init(
        inserted: Set<ManagedObjectID>, updated: Set<ManagedObjectID>, deleted: Set<ManagedObjectID>,
        author: String? = nil, contextName: String? = nil, token: Int64? = nil
    ) {
        self.init(
            context: ContextIdentifier(raw: 0), contextName: contextName, author: author,
            coordinator: CoordinatorIdentifier(raw: 0), parent: nil,
            inserted: inserted, updated: updated, deleted: deleted, token: token)
    }

    init(
        context: ContextIdentifier, contextName: String?, author: String?, coordinator: CoordinatorIdentifier,
        parent: ContextIdentifier?, inserted: Set<ManagedObjectID>, updated: Set<ManagedObjectID>, deleted: Set<ManagedObjectID>,
        token: Int64? = nil, isBatch: Bool = false
    ) {
        self.token = token
        self.isBatch = isBatch
        self.context = context
        self.contextName = contextName
        self.author = author
        self.coordinator = coordinator
        self.parent = parent
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// Whether nothing was saved.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// Posted when a context's objects changed: by local edits (coalesced at the end of each
/// `perform` block, or by ``ManagedObjectContext/processPendingChanges()``), by a merge, a
/// refresh, a rollback or a reset.
public struct ObjectsDidChangeNotification: Sendable {
    /// The context whose objects changed.
    public let context: ContextIdentifier
    /// Objects inserted (locally, or saved elsewhere and merged).
    public let inserted: Set<ManagedObjectID>
    /// Objects whose values changed.
    public let updated: Set<ManagedObjectID>
    /// Objects deleted.
    public let deleted: Set<ManagedObjectID>
    /// Registered objects re-read from the store by a merge or refresh.
    public let refreshed: Set<ManagedObjectID>
    /// Objects no longer valid in the context (reset, or deleted elsewhere).
    public let invalidated: Set<ManagedObjectID>
    /// Whether every object was invalidated (the context was reset).
    public let invalidatedAll: Bool
    /// Whether every object was refreshed (``ManagedObjectContext/refreshAllObjects()``): the
    /// store may have changed in ways no set lists, so observers should re-read.
    public var refreshedAll = false
    /// Registered objects a merge was told were updated but could not re-read (a store on a
    /// server, unreachable for a moment): they keep their old values until merged again.
    public var notReread: Set<ManagedObjectID> = []

    /// Whether nothing changed.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty && invalidated.isEmpty && !invalidatedAll && !refreshedAll
    }
}

/// A registration for notifications; notifications stop when it is cancelled or released.
public final class ContextObservation: Sendable {
    private let cancelAction: Locked<(@Sendable () -> Void)?>

    init(cancel: @escaping @Sendable () -> Void) {
        self.cancelAction = Locked(cancel)
    }

    /// Stops the notifications.
    public func cancel() {
        let action = cancelAction.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { cancel() }
}
