/// A fetched property (Core Data's `<fetchedProperty>`): a read-only list of objects of another
/// entity, found by a predicate evaluated each time the property is read, with `$FETCH_SOURCE`
/// standing for the object that has the property.
///
/// Read it with ``ManagedObjectContext/fetchedProperty(_:of:)``; it is never stored.
public struct FetchedPropertyDescription: Codable, Sendable, Hashable {
    /// The property's name.
    public var name: String
    /// The entity whose objects the property lists.
    public var entityName: String
    /// The predicate, as an `NSPredicate` format string (see ``ObjectPredicate/init(format:_:)``);
    /// `$FETCH_SOURCE` is the object that has the property. Empty: every object of the entity.
    public var predicateFormat: String

    /// Creates a fetched property description.
    public init(name: String, entityName: String, predicateFormat: String) {
        self.name = name
        self.entityName = entityName
        self.predicateFormat = predicateFormat
    }
}
