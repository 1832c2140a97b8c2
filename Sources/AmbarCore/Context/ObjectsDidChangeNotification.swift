import Foundation
import Synchronization

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
