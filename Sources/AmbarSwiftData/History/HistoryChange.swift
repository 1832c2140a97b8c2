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
public protocol HistoryInsert: Sendable {
    /// The model inserted.
    var changedPersistentIdentifier: PersistentIdentifier { get }
}

/// A change of a model in a history transaction.
public protocol HistoryUpdate: Sendable {
    /// The model changed.
    var changedPersistentIdentifier: PersistentIdentifier { get }
}

/// A deletion in a history transaction.
public protocol HistoryDelete: Sendable {
    /// The model deleted.
    var changedPersistentIdentifier: PersistentIdentifier { get }
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

/// The values a deleted model's `.preserveValueOnDeletion` attributes held.
///
/// The ledger does not keep deleted values yet: every subscript reads `nil`
/// (<doc:ComingFromSwiftData> lists this).
public struct HistoryTombstone<Model: PersistentModel>: Sendable {
    /// The value the attribute at `keyPath` held, when it was preserved.
    public subscript<Value>(keyPath: KeyPath<Model, Value>) -> Value? { nil }
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
        for id in transaction.deleted.sorted(by: order) where id.entityName == name {
            changes.append(.delete(DefaultHistoryDelete<Self>(changedPersistentIdentifier: PersistentIdentifier(id), tombstone: HistoryTombstone())))
        }
        return changes
    }

    private static func order(_ a: ManagedObjectID, _ b: ManagedObjectID) -> Bool { (a.primaryKey ?? 0) < (b.primaryKey ?? 0) }
}
