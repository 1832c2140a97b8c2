import Foundation

/// What ``DataStack/restoreStore(at:from:model:allowingAnotherStore:)`` did.
public struct StoreRestoreReport: Sendable, Equatable {
    /// The store's path, now holding the backup's contents.
    public let store: URL
    /// The backup restored.
    public let backup: URL
    /// Where the replaced store was kept (its sidecars beside it, with the same suffixes).
    public let keptAside: URL
    /// The restored store's UUID.
    public let storeUUID: String
    /// The ledger head of the backup as it was taken.
    public let backupHead: Int64
    /// The ledger head of the store it replaced.
    public let replacedHead: Int64
    /// The token of the marker transaction the restore recorded: the restored ledger continues
    /// after the replaced one, and every position recorded before it is expired.
    public let markerToken: Int64

    /// A value with every stored property given.
    package init(store: URL, backup: URL, keptAside: URL, storeUUID: String, backupHead: Int64, replacedHead: Int64, markerToken: Int64) {
        self.store = store
        self.backup = backup
        self.keptAside = keptAside
        self.storeUUID = storeUUID
        self.backupHead = backupHead
        self.replacedHead = replacedHead
        self.markerToken = markerToken
    }
}
