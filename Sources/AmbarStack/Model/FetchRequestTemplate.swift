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

    /// Creates a template.
    public init(name: String, entityName: String, predicateFormat: String, fetchLimit: Int = 0) {
        self.name = name
        self.entityName = entityName
        self.predicateFormat = predicateFormat
        self.fetchLimit = fetchLimit
    }

    enum CodingKeys: String, CodingKey { case name, entityName, predicateFormat, fetchLimit }

    /// Decodes the description, taking the fields added after the first release as absent
    /// (their defaults) when a stored model does not have them.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try c.decode(String.self, forKey: .name), entityName: try c.decode(String.self, forKey: .entityName),
            predicateFormat: try c.decodeIfPresent(String.self, forKey: .predicateFormat) ?? "",
            fetchLimit: try c.decodeIfPresent(Int.self, forKey: .fetchLimit) ?? 0)
    }
}
