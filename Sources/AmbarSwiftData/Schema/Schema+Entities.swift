import AmbarStack

extension Schema {
    /// The Ambar model the schema describes: an entity per model class, relationships paired
    /// with their inverses (those written on one side get them on both; those written on
    /// neither side are paired when the destination has exactly one relationship back).
    ///
    /// - Throws: ``SwiftDataError`` when the entities do not make a model (a relationship
    ///   whose inverse does not lead back, two classes with one name).
    func managedObjectModel() throws -> ManagedObjectModel {
        var entities = types.map(Self.entity(for:))
        Self.pairInverses(&entities)
        do {
            return try ManagedObjectModel(entities: entities)
        } catch {
            throw SwiftDataError.invalidSchema(self, cause: error)
        }
    }

    private static func entity(for type: any PersistentModel.Type) -> EntityDescription {
        let metadata = type.schemaMetadata
        var properties: [PropertyDescription] = []
        var unique: [[String]] = []
        for property in metadata {
            let options = property.options
            switch property.kind {
            case .attribute(let attributeType, let isOptional, let defaultValue, let customClassName):
                properties.append(
                    .attributeDescription(
                        AttributeDescription(
                            name: property.name, type: attributeType, isOptional: isOptional, defaultValue: defaultValue,
                            renamingIdentifier: options.originalName, isTransient: options.has(.ephemeral), customClassName: customClassName,
                            preservesValueOnDeletion: options.has(.preserveValueOnDeletion))))
                if options.has(.unique) { unique.append([property.name]) }
            case .toOne(let destination, let isOptional):
                properties.append(
                    .relationshipDescription(
                        RelationshipDescription(
                            name: property.name, destination: destination.entityName, inverse: options.inverseName, isToMany: false,
                            deleteRule: options.deleteRule.ambar, isOptional: isOptional, renamingIdentifier: options.originalName)))
            case .toMany(let destination, _):
                properties.append(
                    .relationshipDescription(
                        RelationshipDescription(
                            name: property.name, destination: destination.entityName, inverse: options.inverseName, isToMany: true,
                            deleteRule: options.deleteRule.ambar, isOptional: true, renamingIdentifier: options.originalName,
                            minCount: options.minimumModelCount ?? 0, maxCount: options.maximumModelCount ?? 0)))
            }
        }
        let names = PropertyNames.shared.names(for: type)
        let constraints = type.constraintNames(names)
        return EntityDescription(
            type.entityName, properties: properties, uniquenessConstraints: unique + constraints.unique, indexes: constraints.indexes)
    }

    /// Gives each relationship its inverse: those written on one side on both, then those
    /// written on neither side when the destination has exactly one free relationship back.
    private static func pairInverses(_ entities: inout [EntityDescription]) {
        let index = Dictionary(entities.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        for e in entities.indices {
            for relationship in entities[e].relationships {
                guard let inverse = relationship.inverse, let d = index[relationship.destination],
                    let r = entities[d].relationships.firstIndex(where: { $0.name == inverse }), entities[d].relationships[r].inverse == nil
                else { continue }
                entities[d].relationships[r].inverse = relationship.name
            }
        }
        for e in entities.indices {
            for i in entities[e].relationships.indices {
                let relationship = entities[e].relationships[i]
                guard relationship.inverse == nil, let d = index[relationship.destination] else { continue }
                let candidates = entities[d].relationships.indices.filter { r in
                    let other = entities[d].relationships[r]
                    return other.destination == entities[e].name && other.inverse == nil && !(d == e && r == i)
                }
                guard candidates.count == 1, let r = candidates.first else { continue }
                entities[e].relationships[i].inverse = entities[d].relationships[r].name
                entities[d].relationships[r].inverse = relationship.name
            }
        }
    }
}

extension PersistentModel {
    /// The property names of the class's `#Unique` and `#Index` lists.
    static func constraintNames(_ names: [AnyKeyPath: String]) -> (unique: [[String]], indexes: [[String]]) {
        let constraints = _$schemaConstraints
        return (
            constraints.unique.map { $0.compactMap { names[$0] } }.filter { !$0.isEmpty },
            constraints.indexes.map { $0.compactMap { names[$0] } }.filter { !$0.isEmpty }
        )
    }
}
