import AmbarCore
import AmbarDataStack
import AmbarResults

/// A value with a unique identifier (Y—Persistence's `CoreModel`): the plain, `Sendable` model
/// that crosses threads, as opposed to the managed record that stays on its context's queue.
public protocol CoreModel {
    /// The identifier's type; stored in the record's uid attribute.
    associatedtype UidType: Hashable & Comparable & AttributeValueConvertible
    /// The unique identifier.
    var uid: UidType { get }
}

/// A managed record found by a unique identifier attribute (Y—Persistence's `DataRecord`).
/// Its entity is the class's ``ManagedObject/entityName-type.property``; its uid attribute is ``uidKey``.
public protocol DataRecord: ManagedObject, CoreModel {
    /// The uid attribute's name; `"uid"` by default.
    static var uidKey: String { get }
}

extension DataRecord {
    public static var uidKey: String { "uid" }
}

/// A record that stands for a model type.
public protocol ModelRepresentable: DataRecord {
    /// The model the record stands for; it shares the record's uid type.
    associatedtype ModelType: CoreModel where ModelType.UidType == UidType
}

/// A record that can take a model's values.
public protocol RecordFromModel: ModelRepresentable {
    /// Sets the record's attributes (uid included) from `model`.
    func fromModel(_ model: ModelType)
}

/// A record that can produce its model.
public protocol RecordToModel: ModelRepresentable {
    /// The model for the record's current values.
    func toModel() -> ModelType
}
