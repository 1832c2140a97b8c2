/// A fetched property (Core Data's `<fetchedProperty>`): a read-only list of objects of another
/// entity, found by a predicate evaluated each time the property is read, with `$FETCH_SOURCE`
/// standing for the object that has the property and `$FETCHED_PROPERTY.userInfo.KEY` for a
/// value of the property's ``userInfo``.
///
/// Read it with ``ManagedObjectContext/fetchedProperty(_:of:)``; it is never stored.
///
/// ```swift
/// let sciFi = FetchedPropertyDescription(
///     name: "sciFi", entityName: "Book",
///     predicateFormat: "author == $FETCH_SOURCE AND genre == $FETCHED_PROPERTY.userInfo.genre",
///     sortDescriptors: [ObjectSortDescriptor(key: "title")], userInfo: ["genre": "sf"])
/// ```
public struct FetchedPropertyDescription: Codable, Sendable, Hashable {
    /// The property's name.
    public var name: String
    /// The entity whose objects the property lists.
    public var entityName: String
    /// The predicate, as an `NSPredicate` format string (see ``ObjectPredicate/init(format:_:)``);
    /// `$FETCH_SOURCE` is the object that has the property. Empty: every object of the entity.
    public var predicateFormat: String
    /// The order of the objects (empty: primary key order).
    public var sortDescriptors: [ObjectSortDescriptor]
    /// The property's user info (Core Data's `<userInfo>` entries), which the predicate reads as
    /// `$FETCHED_PROPERTY.userInfo.KEY`.
    public var userInfo: [String: String]

    /// Creates a fetched property description.
    public init(
        name: String, entityName: String, predicateFormat: String, sortDescriptors: [ObjectSortDescriptor] = [], userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.entityName = entityName
        self.predicateFormat = predicateFormat
        self.sortDescriptors = sortDescriptors
        self.userInfo = userInfo
    }

    enum CodingKeys: String, CodingKey { case name, entityName, predicateFormat, sortDescriptors, userInfo }

    /// Decodes the description, taking the fields added after the first release as absent
    /// (their defaults) when a stored model does not have them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try c.decode(String.self, forKey: .name), entityName: try c.decode(String.self, forKey: .entityName),
            predicateFormat: try c.decodeIfPresent(String.self, forKey: .predicateFormat) ?? "",
            sortDescriptors: try c.decodeIfPresent([ObjectSortDescriptor].self, forKey: .sortDescriptors) ?? [],
            userInfo: try c.decodeIfPresent([String: String].self, forKey: .userInfo) ?? [:])
    }

    /// Encodes the description, leaving out what is empty.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(entityName, forKey: .entityName)
        try c.encode(predicateFormat, forKey: .predicateFormat)
        if !sortDescriptors.isEmpty { try c.encode(sortDescriptors, forKey: .sortDescriptors) }
        if !userInfo.isEmpty { try c.encode(userInfo, forKey: .userInfo) }
    }
}
