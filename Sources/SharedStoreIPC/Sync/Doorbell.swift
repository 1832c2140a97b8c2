import AmbarCore
import AmbarDataStack

/// A hint that the ledger holds a transaction this process has not merged, however it arrived:
/// a hub frame today, another transport tomorrow. The `LedgerFollower` never trusts it: it
/// reads the ledger, and only checks the doorbell's claim against what the ledger holds.
struct Doorbell: Sendable {
    /// The token the sender says it committed.
    var token: Int64
    /// The sender's process instance, when the doorbell names one.
    var instanceID: UInt64?
    /// What the sender says the transaction changed, when the doorbell carries it.
    var claim: DidSaveNotification?
}
