import AmbarStack
import Foundation

/// A model's identity (``PersistentModel/persistentModelID``): the stored object's, the same in
/// every context and process once the model is saved; before that, one of its own.
///
/// Identifiers are `Codable` (a permanent one encodes as its URI, which any process of the store
/// decodes and resolves with ``ModelContext/model(for:)``) and `Comparable` (by entity, then
/// by primary key: saved objects in the order they were first saved).
public struct PersistentIdentifier: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    enum Storage: Hashable, Sendable {
        case stored(ManagedObjectID)
        /// A model not inserted yet: its backing's identity. (The backing is only compared.)
        case unsaved(ObjectIdentifier)
    }
    let storage: Storage

    init(_ id: ManagedObjectID) { storage = .stored(id) }
    init(unsaved backing: _ModelBacking) { storage = .unsaved(ObjectIdentifier(backing)) }

    /// The stored object's identity, when the model has one.
    var objectID: ManagedObjectID? {
        if case .stored(let id) = storage { return id }
        return nil
    }

    /// The name of the entity the model is stored as (`nil` before it is inserted).
    public var entityName: String? { objectID?.entityName }

    /// The identifier as a URI (`ambar://…`), or a description of an unsaved one.
    public var description: String {
        switch storage {
        case .stored(let id): return id.uriString
        case .unsaved(let identity): return "unsaved model \(identity.hashValue)"
        }
    }

    /// Orders by entity name, then primary key; unsaved identifiers come last.
    public static func < (lhs: PersistentIdentifier, rhs: PersistentIdentifier) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.stored(let a), .stored(let b)):
            if a.entityName != b.entityName { return a.entityName < b.entityName }
            return (a.primaryKey ?? .max, a.uriString) < (b.primaryKey ?? .max, b.uriString)
        case (.stored, .unsaved): return true
        case (.unsaved, .stored): return false
        case (.unsaved(let a), .unsaved(let b)): return a.hashValue < b.hashValue
        }
    }

    /// Decodes an identifier encoded by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let uri = try container.decode(String.self)
        do {
            storage = .stored(try ManagedObjectID(uriString: uri))
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(uri)' is not the URI of a stored model: \(error)")
        }
    }

    /// Encodes a permanent identifier as its URI.
    ///
    /// - Throws: `EncodingError.invalidValue` for the identifier of a model not saved yet, which
    ///   no other context could resolve.
    public func encode(to encoder: any Encoder) throws {
        guard case .stored(let id) = storage, !id.isTemporaryID else {
            throw EncodingError.invalidValue(
                self, .init(codingPath: encoder.codingPath, debugDescription: "the model is not saved yet: its identifier is temporary"))
        }
        var container = encoder.singleValueContainer()
        try container.encode(id.uriString)
    }
}
