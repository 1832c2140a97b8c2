import Foundation

/// What ``AmbarDataStack/DataStack/restoreStore(on:from:model:allowingAnotherStore:)`` did.
public struct PostgresRestoreReport: Sendable, Equatable {
    /// The database restored into, its password left out.
    public let server: String
    /// The archive restored.
    public let backup: URL
    /// The restored store's UUID.
    public let storeUUID: String
    /// The ledger head of the archive as it was taken.
    public let backupHead: Int64
    /// The ledger head of the store it replaced.
    public let replacedHead: Int64
    /// The token of the marker transaction the restore recorded: the restored ledger continues
    /// after the replaced one, and every position recorded before it is expired.
    public let markerToken: Int64
}
