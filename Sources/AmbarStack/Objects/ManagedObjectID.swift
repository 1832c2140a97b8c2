import Foundation
import Synchronization

/// Identifies one managed object, in any context of any process that opens the same store.
///
/// An inserted object has a *temporary* ID until it is saved (or until
/// ``ManagedObjectContext/obtainPermanentIDs(for:)``); it then gets a *permanent* ID made of the
/// store's UUID, the entity name and the row's primary key. Permanent IDs have a URI form,
/// `ambar://<store-uuid>/<Entity>/p<pk>`, that ``init(uriString:)`` parses back.
///
/// ```swift
/// let uri = task.objectID.uriRepresentation  // keep it, or pass it to another process
/// let id = try coordinator.managedObjectID(forURIRepresentation: uri)
/// let same = try context.existingObject(with: id) as? TaskItem
/// ```
public struct ManagedObjectID: Sendable, Hashable, CustomStringConvertible {
    enum Key: Sendable, Hashable {
        case permanent(Int64)
        case temporary(UInt64)
    }

    /// The name of the object's entity (its concrete entity, never a parent).
    public let entityName: String
    /// The UUID of the store that holds the object; empty for temporary IDs.
    public let storeIdentifier: String
    let key: Key

    private static let temporaryCounter = Atomic<UInt64>(0)

    /// The permanent ID of row `primaryKey` of `entityName` in the store `storeIdentifier`.
    package init(entityName: String, storeIdentifier: String, primaryKey: Int64) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
        self.key = .permanent(primaryKey)
    }

    /// Makes a new temporary ID for an object about to be inserted.
    static func makeTemporary(entityName: String) -> ManagedObjectID {
        let n = temporaryCounter.add(1, ordering: .relaxed).newValue
        return ManagedObjectID(entityName: entityName, storeIdentifier: "", key: .temporary(n))
    }

    private init(entityName: String, storeIdentifier: String, key: Key) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
        self.key = key
    }

    // Hashing and equality look at the cheap, most distinguishing parts first: the key, then the
    // entity name; the store UUID (the same for nearly every ID a process holds) is compared last
    // and not hashed.
    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs.key == rhs.key && lhs.entityName == rhs.entityName && lhs.storeIdentifier == rhs.storeIdentifier
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(entityName.utf8.count)
    }

    /// Whether the ID is temporary (the object was inserted but not yet saved).
    public var isTemporaryID: Bool {
        if case .temporary = key { return true }
        return false
    }

    /// The row's primary key for a permanent ID; `nil` for a temporary one.
    public var primaryKey: Int64? {
        if case .permanent(let pk) = key { return pk }
        return nil
    }

    /// The URI form: `ambar://<store-uuid>/<Entity>/p<pk>`, or `ambar:///<Entity>/t<n>` when temporary.
    public var uriString: String {
        switch key {
        case .permanent(let pk): return "ambar://\(storeIdentifier)/\(entityName)/p\(pk)"
        case .temporary(let n): return "ambar:///\(entityName)/t\(n)"
        }
    }

    /// The URI form as a `URL`.
    public var uriRepresentation: URL {
        // The string is built from a UUID, an entity name validated by the model and a number.
        URL(string: uriString) ?? URL(fileURLWithPath: "/")
    }

    /// Parses the URI form of a permanent ID.
    ///
    /// - Throws: ``AmbarError/invalidObjectID(_:)`` when the string is not of the form
    ///   `ambar://<store-uuid>/<Entity>/p<pk>`.
    public init(uriString: String) throws(AmbarError) {
        let prefix = "ambar://"
        guard uriString.hasPrefix(prefix) else {
            throw .invalidObjectID("'\(uriString)' does not start with \(prefix)")
        }
        let parts = uriString.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .invalidObjectID("'\(uriString)' is not of the form ambar://<store-uuid>/<Entity>/p<pk>")
        }
        let store = String(parts[0])
        let entity = String(parts[1])
        let last = parts[2]
        guard UUID(uuidString: store) != nil else {
            throw .invalidObjectID("'\(store)' in '\(uriString)' is not a store UUID (temporary IDs have no URI that parses back)")
        }
        guard !entity.isEmpty else { throw .invalidObjectID("'\(uriString)' names no entity") }
        guard last.first == "p", let pk = Int64(last.dropFirst()), pk > 0 else {
            throw .invalidObjectID("'\(last)' in '\(uriString)' is not p<primary key>")
        }
        self.init(entityName: entity, storeIdentifier: store, key: .permanent(pk))
    }

    /// Parses the URI form of a permanent ID given as a `URL`.
    public init(uri: URL) throws(AmbarError) {
        try self.init(uriString: uri.absoluteString)
    }

    /// Same as ``uriString``.
    public var description: String { uriString }
}
