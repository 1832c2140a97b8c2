import Foundation

/// A model: the set of entities a store holds. Codable, so a store can keep the model it was
/// created with, and identified by a ``versionHash``.
///
/// ```swift
/// let model = try ManagedObjectModel(entities: [
///     EntityDescription("Department", properties: [
///         .attribute("name", .string),
///         .toMany("employees", "Employee", inverse: "department", deleteRule: .cascade),
///     ]),
///     EntityDescription("Employee", properties: [
///         .attribute("name", .string),
///         .toOne("department", "Department", inverse: "employees"),
///     ]),
/// ], classes: [Employee.self])
/// ```
public struct ManagedObjectModel: Sendable, Hashable, Codable {
    /// The entities, in the order given.
    public let entities: [EntityDescription]
    /// A hash of the entities' definitions: equal models have equal hashes. Renaming identifiers
    /// do not count: adding one to an unchanged model does not make a new version.
    public let versionHash: String
    /// The fetch requests stored with the model (Core Data's `<fetchRequest>` elements), by name.
    public let fetchRequestTemplates: [String: FetchRequestTemplate]
    package let resolved: ResolvedModel

    /// Creates and validates a model.
    ///
    /// - Parameters:
    ///   - entities: the entity definitions.
    ///   - classes: managed-object subclasses; each is used for the entity its
    ///     ``ManagedObject/entityName-type.property`` names. Entities without a class use ``ManagedObject``.
    ///   - fetchRequestTemplates: named fetch requests (Core Data's fetch request templates).
    /// - Throws: ``AmbarError/invalidModel(_:)`` naming the entity and property at fault.
    ///   - fetchRequestTemplates: fetch requests kept with the model, each naming an entity of it.
    public init(entities: [EntityDescription], classes: [ManagedObject.Type] = [], fetchRequestTemplates: [FetchRequestTemplate] = []) throws(AmbarError) {
        try self.init(entities: entities, classes: classes, fetchRequestTemplates: fetchRequestTemplates) { $0.message }
    }

    /// Creates a model, describing a problem with `describe` (a model file reader adds the line
    /// of the element at fault).
    package init(
        entities: [EntityDescription], classes: [ManagedObject.Type] = [], fetchRequestTemplates: [FetchRequestTemplate] = [],
        describe: (ModelIssue) -> String
    ) throws(AmbarError) {
        self.entities = entities
        var classMap: [String: ManagedObject.Type] = [:]
        for type in classes { classMap[type.entityName] = type }
        do {
            self.resolved = try ResolvedModel(entities: entities, classes: classMap)
        } catch {
            throw .invalidModel(describe(error))
        }
        var templates: [String: FetchRequestTemplate] = [:]
        for template in fetchRequestTemplates {
            guard templates[template.name] == nil else {
                throw .invalidModel(
                    describe(ModelIssue(entity: nil, property: template.name, message: "fetch request template '\(template.name)' is defined twice")))
            }
            guard resolved.entities[template.entityName] != nil else {
                throw .invalidModel(
                    describe(
                        ModelIssue(
                            entity: nil, property: template.name,
                            message: "fetch request template '\(template.name)' fetches '\(template.entityName)', which is not in the model")))
            }
            for sort in template.sortDescriptors {
                if let problem = resolved.sortKeyProblem(sort.key, from: template.entityName) {
                    throw .invalidModel(
                        describe(ModelIssue(entity: nil, property: template.name, message: "fetch request template '\(template.name)' sorts by \(problem)")))
                }
            }
            templates[template.name] = template
        }
        for entity in entities {
            for property in entity.fetchedProperties {
                for sort in property.sortDescriptors {
                    if let problem = resolved.sortKeyProblem(sort.key, from: property.entityName) {
                        throw .invalidModel(
                            describe(
                                ModelIssue(
                                    entity: entity.name, property: property.name,
                                    message: "fetched property '\(entity.name).\(property.name)' sorts by \(problem)")))
                    }
                }
            }
        }
        self.fetchRequestTemplates = templates
        self.versionHash = Self.hash(of: entities)
    }

    /// Returns this model with `classes` used for their entities.
    public func registering(_ classes: [ManagedObject.Type]) throws(AmbarError) -> ManagedObjectModel {
        var map = resolved.classes
        for type in classes { map[type.entityName] = type }
        return try ManagedObjectModel(entities: entities, classes: Array(map.values), fetchRequestTemplates: Array(fetchRequestTemplates.values))
    }

    /// The entity named `name`, as declared: inherited properties are on its parent entities.
    public func entity(named name: String) -> EntityDescription? {
        resolved.entities[name]?.description
    }

    /// The names of all entities.
    public var entityNames: [String] { entities.map(\.name) }

    /// Whether the entity named `name` is `ancestor` or inherits from it, directly or not
    /// (false when the model has no entity named `name`).
    ///
    /// ```swift
    /// model.entity(named: "Manager", isKindOf: "Employee")  // true
    /// ```
    public func entity(named name: String, isKindOf ancestor: String) -> Bool {
        resolved.entities[name]?.isKind(of: ancestor) ?? false
    }

    enum CodingKeys: String, CodingKey { case entities, fetchRequestTemplates }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let entities = try container.decode([EntityDescription].self, forKey: .entities)
        let templates = try container.decodeIfPresent([FetchRequestTemplate].self, forKey: .fetchRequestTemplates) ?? []
        try self.init(entities: entities, fetchRequestTemplates: templates)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entities, forKey: .entities)
        if !fetchRequestTemplates.isEmpty {
            try container.encode(fetchRequestTemplates.values.sorted { $0.name < $1.name }, forKey: .fetchRequestTemplates)
        }
    }

    public static func == (lhs: ManagedObjectModel, rhs: ManagedObjectModel) -> Bool {
        lhs.versionHash == rhs.versionHash && lhs.entities == rhs.entities && lhs.fetchRequestTemplates == rhs.fetchRequestTemplates
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(versionHash) }

    /// FNV-1a over the canonical JSON of the entities sorted by name. Renaming identifiers and
    /// fetched properties are left out: they say where an element came from or how it is read,
    /// not what the store holds.
    static func hash(of entities: [EntityDescription]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Non-finite numbers (a default of .infinity) spelled out, so that every model encodes.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        let sorted = entities.sorted { $0.name < $1.name }.map { entity in
            var entity = entity
            entity.renamingIdentifier = nil
            entity.fetchedProperties = []
            // Validation rules and preserved values, like renaming identifiers, do not change what
            // the store's tables hold.
            for i in entity.attributes.indices {
                entity.attributes[i].renamingIdentifier = nil
                entity.attributes[i].validation = AttributeValidation()
                entity.attributes[i].preservesValueOnDeletion = false
            }
            for i in entity.relationships.indices { entity.relationships[i].renamingIdentifier = nil }
            return entity
        }
        // With non-finite numbers spelled out, entities of plain values always encode:
        // try?: the names are a last resort that the encoder never leaves to
        let bytes = (try? encoder.encode(sorted)) ?? Data(sorted.map(\.name).joined(separator: ",").utf8)
        // Unpadded hex: the form every existing store keeps.
        return String(FNV1a(bytes).value, radix: 16)
    }
}
