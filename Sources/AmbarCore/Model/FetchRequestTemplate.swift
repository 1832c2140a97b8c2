/// A fetch request stored in a model (Core Data's `<fetchRequest>`): an entity and a predicate
/// format whose `$VARIABLES` are given when the request is made, with
/// ``ManagedObjectModel/fetchRequestTemplate(named:substitutionVariables:)``.
public struct FetchRequestTemplate: Codable, Sendable, Hashable {
    /// The template's name, unique in its model.
    public var name: String
    /// The entity the request fetches.
    public var entityName: String
    /// The predicate, as an `NSPredicate` format string; empty for every object.
    public var predicateFormat: String
    /// At most this many results (0: no limit).
    public var fetchLimit: Int
    /// The order of the results (empty: primary key order).
    public var sortDescriptors: [ObjectSortDescriptor]
    /// Whether objects of the entity's sub-entities are fetched too.
    public var includesSubentities: Bool

    /// Creates a template.
    ///
    /// ```swift
    /// let recent = FetchRequestTemplate(
    ///     name: "RecentBooks", entityName: "Book", predicateFormat: "published > $SINCE",
    ///     fetchLimit: 20, sortDescriptors: [ObjectSortDescriptor(key: "published", ascending: false)])
    /// ```
    public init(
        name: String, entityName: String, predicateFormat: String, fetchLimit: Int = 0, sortDescriptors: [ObjectSortDescriptor] = [],
        includesSubentities: Bool = true
    ) {
        self.name = name
        self.entityName = entityName
        self.predicateFormat = predicateFormat
        self.fetchLimit = fetchLimit
        self.sortDescriptors = sortDescriptors
        self.includesSubentities = includesSubentities
    }

    enum CodingKeys: String, CodingKey { case name, entityName, predicateFormat, fetchLimit, sortDescriptors, includesSubentities }

    /// Decodes the description, taking the fields added after the first release as absent
    /// (their defaults) when a stored model does not have them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try c.decode(String.self, forKey: .name), entityName: try c.decode(String.self, forKey: .entityName),
            predicateFormat: try c.decodeIfPresent(String.self, forKey: .predicateFormat) ?? "",
            fetchLimit: try c.decodeIfPresent(Int.self, forKey: .fetchLimit) ?? 0,
            sortDescriptors: try c.decodeIfPresent([ObjectSortDescriptor].self, forKey: .sortDescriptors) ?? [],
            includesSubentities: try c.decodeIfPresent(Bool.self, forKey: .includesSubentities) ?? true)
    }

    /// Encodes the template, leaving out settings at their defaults.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(entityName, forKey: .entityName)
        try c.encode(predicateFormat, forKey: .predicateFormat)
        try c.encode(fetchLimit, forKey: .fetchLimit)
        if !sortDescriptors.isEmpty { try c.encode(sortDescriptors, forKey: .sortDescriptors) }
        if !includesSubentities { try c.encode(includesSubentities, forKey: .includesSubentities) }
    }
}
