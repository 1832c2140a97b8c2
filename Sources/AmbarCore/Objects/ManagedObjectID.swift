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
public struct ManagedObjectID: Sendable, Hashable, BitwiseCopyable, CustomStringConvertible {
    enum Key: Sendable, Hashable, BitwiseCopyable {
        case permanent(Int64)
        case temporary(UInt64)
    }

    /// The store and entity, interned: the same instance for every ID of that store and entity,
    /// kept alive by ``ObjectIDScope``'s table, so the ID needs no reference count.
    let scope: Unmanaged<ObjectIDScope>
    let key: Key

    /// The name of the object's entity (its concrete entity, never a parent).
    public var entityName: String { scope._withUnsafeGuaranteedRef { $0.entityName } }
    /// The UUID of the store that holds the object; empty for temporary IDs.
    public var storeIdentifier: String { scope._withUnsafeGuaranteedRef { $0.storeIdentifier } }

    private static let temporaryCounter = Atomic<UInt64>(0)

    /// The permanent ID of row `primaryKey` of `entityName` in the store `storeIdentifier`.
    package init(entityName: String, storeIdentifier: String, primaryKey: Int64) {
        self.scope = ObjectIDScope.interned(entityName: entityName, storeIdentifier: storeIdentifier)
        self.key = .permanent(primaryKey)
    }

    /// The permanent ID of row `primaryKey` in an interned scope (no lookup).
    package init(scope: Unmanaged<ObjectIDScope>, primaryKey: Int64) {
        self.scope = scope
        self.key = .permanent(primaryKey)
    }

    /// Makes a new temporary ID for an object about to be inserted.
    static func makeTemporary(for layout: EntityLayout) -> ManagedObjectID {
        let n = temporaryCounter.add(1, ordering: .relaxed).newValue
        return ManagedObjectID(scope: layout.temporaryScope, key: .temporary(n))
    }

    private init(scope: Unmanaged<ObjectIDScope>, key: Key) {
        self.scope = scope
        self.key = key
    }

    // Scopes are interned, so the same store and entity is the same scope instance: equality and
    // hashing compare the key and the scope's address, never a string.
    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs.key == rhs.key && lhs.scope.toOpaque() == rhs.scope.toOpaque()
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(scope.toOpaque())
    }

    /// The hash a `Set` or `Dictionary` uses: the key and the scope's address mixed with the
    /// table's per-process seed by multiply-xor rounds, instead of a full SipHash pass. Contexts
    /// register every object they fetch by its ID, and hashing was a fifth of a large fetch.
    ///
    /// Sixteen neighbouring keys of one entity (the same key but for its lowest four bits) land
    /// in the sixteen buckets of one aligned group, and groups are scattered as any hash scatters
    /// keys: the rest of the key is mixed into the group, and the lowest four bits are only
    /// permuted within it (by four bits of the mix the group's position does not use, so that
    /// keys at a stride of sixteen or more still reach every bucket of their groups). A fetch
    /// registers (and a merge looks up) objects mostly in key order, so one cache miss serves
    /// sixteen objects instead of one.
    public func _rawHashValue(seed: Int) -> Int {
        let keyBits: UInt64
        switch key {
        case .permanent(let pk): keyBits = UInt64(bitPattern: pk)
        case .temporary(let n): keyBits = n ^ 0x8000_0000_0000_0000
        }
        let scopeBits = UInt64(UInt(bitPattern: scope.toOpaque()))
        var h = ((keyBits >> 4) ^ UInt64(bitPattern: Int64(seed))) &* 0x9E37_79B9_7F4A_7C15
        h ^= scopeBits &* 0xC2B2_AE3D_27D4_EB4F
        h ^= h >> 29
        h &*= 0xBF58_476D_1CE4_E5B9
        h ^= h >> 32
        return Int(truncatingIfNeeded: (h << 4) | ((keyBits ^ (h >> 60)) & 15))
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
        self.init(scope: ObjectIDScope.interned(entityName: entity, storeIdentifier: store), key: .permanent(pk))
    }

    /// Parses the URI form of a permanent ID given as a `URL`.
    public init(uri: URL) throws(AmbarError) {
        try self.init(uriString: uri.absoluteString)
    }

    /// Same as ``uriString``.
    public var description: String { uriString }
}
