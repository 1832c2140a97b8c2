import AmbarCore
import AmbarDataStack
import Foundation

/// One transaction of another process, merged into this process's main context.
///
/// Every event describes a transaction read from the store's ledger: a message from another
/// process only rings the bell, so an event never reports what the ledger does not hold.
public struct RemoteMergeEvent: Sendable {
    /// The transaction's ledger token.
    public let token: Int64
    /// Its author (the saving context's transaction author), if any.
    public let author: String?
    /// The saving process's ID, for people (PIDs repeat across PID namespaces).
    public let processID: Int32
    /// The saving process's instance (`ProcessInstance.id` there); 0 when unknown.
    public let instanceID: UInt64
    /// What the transaction inserted (all of it, registered here or not).
    public let inserted: Set<ManagedObjectID>
    /// What the transaction updated.
    public let updated: Set<ManagedObjectID>
    /// What the transaction deleted.
    public let deleted: Set<ManagedObjectID>
    /// The registered objects of this process's main context the merge re-read.
    public let refreshed: Set<ManagedObjectID>
    /// The registered objects the merge found gone.
    public let invalidated: Set<ManagedObjectID>
    /// From the commit in the other process (its ledger timestamp) to the merge here.
    public let latency: TimeInterval
    /// True when the history this process needed was purged: every object was refreshed instead.
    public let historyExpired: Bool
}
