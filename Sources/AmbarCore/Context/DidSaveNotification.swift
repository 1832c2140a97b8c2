import Foundation
import Synchronization

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
