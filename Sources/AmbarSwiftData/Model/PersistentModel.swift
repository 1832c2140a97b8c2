import AmbarStack
import Foundation

/// A class whose instances are persisted: what `@Model` makes of a class, as in SwiftData.
///
/// The macro writes the requirements; the protocol gives every model its identity
/// (``persistentModelID``), its context (``modelContext``), its state (``hasChanges``,
/// ``isDeleted``) and equality by identity.
///
/// ```swift
/// @Model final class Trip {
///     var name: String
///     init(name: String) { self.name = name }
/// }
///
/// let trip = Trip(name: "Lisbon")
/// context.insert(trip)
/// try context.save()
/// print(trip.persistentModelID, trip.hasChanges)   // a permanent identifier, false
/// ```
public protocol PersistentModel: AnyObject, _QueryableModel, Observable, Hashable, Identifiable, Sendable {
    /// Where the model's persisted values live.
    var persistentBackingData: _ModelBacking { get }
    /// The class's persisted properties, in declaration order.
    static var schemaMetadata: [Schema.PropertyMetadata] { get }
    /// The class's `#Unique` and `#Index` lists.
    static var _$schemaConstraints: Schema._Constraints<Self> { get }
    /// A model for a stored object (what a context makes when it fetches one).
    init(backingData: _ModelBacking)
    /// Tells Observation that persisted property `name` changed (a merge of another context's
    /// or process's save).
    func _$observedValueChanged(_ name: String)
}

extension PersistentModel {
    /// The model's identity: temporary until it is inserted and saved, then the stored object's
    /// permanent identity (the same in every context and process).
    public var persistentModelID: PersistentIdentifier {
        if let object = persistentBackingData.managedObject {
            return persistentBackingData.onQueue(of: object) { PersistentIdentifier(object.objectID) }
        }
        return PersistentIdentifier(unsaved: persistentBackingData)
    }

    /// The model's identity (``persistentModelID``), for `Identifiable`.
    public var id: PersistentIdentifier { persistentModelID }

    /// The context the model was inserted into or fetched from; `nil` before it is inserted and
    /// after its deletion is saved.
    public var modelContext: ModelContext? { persistentBackingData.modelContext }

    /// Whether the model has changes its context has not saved (inserted, changed or deleted).
    public var hasChanges: Bool {
        guard let object = persistentBackingData.managedObject else { return false }
        return persistentBackingData.onQueue(of: object) { object.hasChanges }
    }

    /// Whether the model was deleted from its context and the deletion is not saved yet.
    public var isDeleted: Bool {
        guard let object = persistentBackingData.managedObject else { return false }
        return persistentBackingData.onQueue(of: object) { object.isDeleted }
    }

    /// Models are equal when they are the same instance (one per stored object and context).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }

    /// Hashes the instance's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The name of the persisted property at `keyPath`.
    public static func _queryablePropertyName(for keyPath: AnyKeyPath) -> String? {
        Schema.PropertyNames.shared.names(for: self)[keyPath]
    }

    /// The stored object the model stands for, once inserted or fetched.
    public var _queryableObjectID: ManagedObjectID? {
        guard let object = persistentBackingData.managedObject else { return nil }
        return persistentBackingData.onQueue(of: object) { object.objectID }
    }

    /// The entity the class is stored as: its name (without the types it is nested in).
    static var entityName: String { String(describing: Self.self) }

    /// No `#Unique` or `#Index`.
    public static var _$schemaConstraints: Schema._Constraints<Self> { Schema._Constraints(unique: [], indexes: []) }
}
