import AmbarCore
import AmbarDataStack
import AmbarResults

/// A record with offline-sync markers (Y—Persistence 1.1's `SyncRecord`): whether it was
/// uploaded, and whether it was deleted locally and must be deleted remotely.
public protocol SyncRecord: DataRecord {
    var isUploaded: Bool { get set }
    var wasDeleted: Bool { get set }
    /// The order of the records the sync queries return; unordered when `nil`.
    static var sort: SortInfo? { get }
    /// The attribute names of the markers; `"isUploaded"` and `"wasDeleted"` by default.
    static var isUploadedKey: String { get }
    static var wasDeletedKey: String { get }
}

extension SyncRecord {
    public static var sort: SortInfo? { nil }
    public static var isUploadedKey: String { "isUploaded" }
    public static var wasDeletedKey: String { "wasDeleted" }
}
