import Foundation

extension ModelContext {
    /// Posted (on the context's caller) before a context saves; the object is the context.
    public static let willSave = Notification.Name("AmbarSwiftData.ModelContext.willSave")
    /// Posted after a context saved; the object is the context, the user info lists the saved
    /// models' identifiers under the ``NotificationKey``s.
    public static let didSave = Notification.Name("AmbarSwiftData.ModelContext.didSave")

    /// The keys of ``didSave``'s user info; each value is a `[PersistentIdentifier]`.
    public enum NotificationKey: String, Sendable {
        /// The models inserted.
        case insertedIdentifiers
        /// The models updated.
        case updatedIdentifiers
        /// The models deleted.
        case deletedIdentifiers
        /// Posted by SwiftData when every model was invalidated; not posted here.
        case invalidatedAllIdentifiers
        /// SwiftData's query generation; not posted here.
        case queryGeneration
    }
}
