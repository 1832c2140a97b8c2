import Foundation

/// This process's identity in the ledger and on the wire: a random number drawn once per process.
///
/// Process IDs are not identities: two processes in different PID namespaces (containers,
/// `unshare --pid`, systemd's `PrivatePIDs=`) can both be PID 1, and a restarted process may get
/// the PID of one that died. Every ledger transaction records the instance of the process that
/// saved it, so a process recognises its own transactions by instance, and the PID stays as
/// information for people.
///
/// ```swift
/// for transaction in try coordinator.history(after: cursor) where !transaction.isFromThisProcess {
///     context.mergeChanges(fromContextDidSave: transaction.notification)
/// }
/// ```
public enum ProcessInstance {
    /// The instance ID of this process: random, never 0, at most `Int64.max` (so that it is
    /// stored as a positive SQL integer).
    public static let id: UInt64 = UInt64.random(in: 1...UInt64(Int64.max))

    /// ``id`` as the ledger stores it.
    package static var storedID: Int64 { Int64(bitPattern: id) }
}
