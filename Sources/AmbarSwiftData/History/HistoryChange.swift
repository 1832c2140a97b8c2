import AmbarStack
import Foundation

/// One change of a history transaction: SwiftData's `HistoryChange`.
///
/// ```swift
/// for change in transaction.changes {
///     switch change {
///     case .insert(let insert as DefaultHistoryInsert<Trip>): print("new", insert.changedPersistentIdentifier)
///     case .update(let update as DefaultHistoryUpdate<Trip>): print("changed", update.updatedAttributes)
///     case .delete(let delete as DefaultHistoryDelete<Trip>): print("deleted", delete.changedPersistentIdentifier)
///     default: break
///     }
/// }
/// ```
public enum HistoryChange: Sendable {
    /// A model was inserted.
    case insert(any HistoryInsert)
    /// A model was changed.
    case update(any HistoryUpdate)
    /// A model was deleted.
    case delete(any HistoryDelete)

    /// The model the change is about.
    public var changedPersistentIdentifier: PersistentIdentifier {
        switch self {
        case .insert(let change): return change.changedPersistentIdentifier
        case .update(let change): return change.changedPersistentIdentifier
        case .delete(let change): return change.changedPersistentIdentifier
        }
    }
}

/// An insertion in a history transaction.
public protocol HistoryInsert<Model>: Sendable {
    /// The class of the model inserted.
    associatedtype Model: PersistentModel
    /// The model inserted.
    var changedPersistentIdentifier: PersistentIdentifier { get }
}

/// A change of a model in a history transaction.
public protocol HistoryUpdate<Model>: Sendable {
    /// The class of the model changed.
    associatedtype Model: PersistentModel
    /// The model changed.
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// The persisted properties whose values changed.
    var updatedAttributes: [PartialKeyPath<Model>] { get }
}

/// A deletion in a history transaction.
public protocol HistoryDelete<Model>: Sendable {
    /// The class of the model deleted.
    associatedtype Model: PersistentModel
    /// The model deleted.
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// What the model's `.preserveValueOnDeletion` attributes held.
    var tombstone: HistoryTombstone<Model> { get }
}

extension HistoryInsert {
    /// The class of the model inserted.
    public var changedModelType: any PersistentModel.Type { Model.self }
}

extension HistoryUpdate {
    /// The class of the model changed.
    public var changedModelType: any PersistentModel.Type { Model.self }
}

extension HistoryDelete {
    /// The class of the model deleted.
    public var changedModelType: any PersistentModel.Type { Model.self }
}

/// The insertion of a `Model`.
public struct DefaultHistoryInsert<Model: PersistentModel>: HistoryInsert {
    /// The model inserted.
    public let changedPersistentIdentifier: PersistentIdentifier
}

/// A change of a `Model`, with the properties that changed.
public struct DefaultHistoryUpdate<Model: PersistentModel>: HistoryUpdate, @unchecked Sendable {  // key paths are immutable
    /// The model changed.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The persisted properties whose values changed.
    public let updatedAttributes: [PartialKeyPath<Model>]
}

/// The deletion of a `Model`.
public struct DefaultHistoryDelete<Model: PersistentModel>: HistoryDelete {
    /// The model deleted.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// What the model's `.preserveValueOnDeletion` attributes held.
    public let tombstone: HistoryTombstone<Model>
}

/// The values a deleted model's `.preserveValueOnDeletion` attributes held when it was deleted,
/// as the store's ledger kept them (read from the store just before the deletion).
///
/// ```swift
/// case .delete(let deletion as any HistoryDelete<Trip>):
///     if let name = deletion.tombstone[\.name] as? String { print("deleted", name) }
/// ```
///
/// A subscript reads `nil` for an attribute that does not preserve its value, and for a model
/// deleted by a batch delete. It gives `Any?`, where SwiftData gives `(any Sendable)?`: cast it
/// to the property's type as SwiftData code does. Iterating gives each preserved attribute's
/// key path and value.
public struct HistoryTombstone<Model: PersistentModel>: Sequence, @unchecked Sendable {  // immutable; the values are copies
    /// The preserved values, by property name, of the property's type.
    private let values: [String: Any]
    private let keyPaths: [(name: String, keyPath: PartialKeyPath<Model>)]

    init(values: [String: Any]) {
        self.values = values
        keyPaths = Model.schemaMetadata.compactMap { property in
            guard values[property.name] != nil, let keyPath = property.keypath as? PartialKeyPath<Model> else { return nil }
            return (property.name, keyPath)
        }
    }

    /// The value the attribute at `keyPath` held, when it was preserved.
    public subscript(keyPath: PartialKeyPath<Model>) -> Any? {
        keyPaths.first { $0.keyPath == keyPath }.flatMap { values[$0.name] }
    }

    /// Each preserved attribute's key path and value.
    public func makeIterator() -> IndexingIterator<[(keyPath: PartialKeyPath<Model>, value: Any)]> {
        keyPaths.compactMap { entry in values[entry.name].map { (entry.keyPath, $0) } }.makeIterator()
    }
}

extension PersistentModel {
    /// The changes of this class in `transaction`, in insert, update, delete order.
    static func historyChanges(in transaction: AmbarStack.HistoryTransaction) -> [HistoryChange] {
        let name = entityName
        var changes: [HistoryChange] = []
        for id in transaction.inserted.sorted(by: order) where id.entityName == name {
            changes.append(.insert(DefaultHistoryInsert<Self>(changedPersistentIdentifier: PersistentIdentifier(id))))
        }
        let keyPaths = Dictionary(schemaMetadata.compactMap { p in (p.keypath as? PartialKeyPath<Self>).map { (p.name, $0) } }, uniquingKeysWith: { a, _ in a })
        for id in transaction.updated.sorted(by: order) where id.entityName == name {
            let names = transaction.updatedProperties[id] ?? []
            changes.append(
                .update(DefaultHistoryUpdate<Self>(changedPersistentIdentifier: PersistentIdentifier(id), updatedAttributes: names.compactMap { keyPaths[$0] }))
            )
        }
        let restorers = Dictionary(schemaMetadata.compactMap { p in p.restore.map { (p.name, $0) } }, uniquingKeysWith: { a, _ in a })
        for id in transaction.deleted.sorted(by: order) where id.entityName == name {
            var values: [String: Any] = [:]
            for (property, stored) in transaction.tombstones[id] ?? [:] {
                if let value = restorers[property]?(stored) { values[property] = value }
            }
            changes.append(
                .delete(DefaultHistoryDelete<Self>(changedPersistentIdentifier: PersistentIdentifier(id), tombstone: HistoryTombstone(values: values))))
        }
        return changes
    }

    private static func order(_ a: ManagedObjectID, _ b: ManagedObjectID) -> Bool { (a.primaryKey ?? 0) < (b.primaryKey ?? 0) }
}
