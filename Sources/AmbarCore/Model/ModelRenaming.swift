/// How the entities and properties of an older model are named in a newer one, found through the
/// newer model's renaming identifiers (Core Data's rule: an element whose renaming identifier is
/// an old element's name — or that old element's own renaming identifier — is that element renamed).
///
/// ``ModelDifference`` compares the older model *after* renaming (``apply(to:)``), so a rename is
/// not "removed + added"; the SQLite store uses the maps to rename tables and columns in place.
package struct ModelRenaming: Sendable {
    /// Old entity name → new name, for renamed entities only.
    package private(set) var entities: [String: String] = [:]
    /// Old entity name → (old property name → new name), for renamed properties only.
    package private(set) var properties: [String: [String: String]] = [:]
    /// Renaming identifiers that cannot be honoured (two elements claiming one, say).
    private(set) var problems: [String] = []

    /// Whether nothing was renamed.
    package var isEmpty: Bool { entities.isEmpty && properties.isEmpty }

    init(from old: ManagedObjectModel, to new: ManagedObjectModel) {
        let oldEntities = old.entities
        var claimed: [String: String] = [:]  // old entity → the new entity that took it
        var pairs: [(old: EntityDescription, new: EntityDescription)] = []
        for entity in new.entities {
            guard let match = Self.match(entity.name, entity.renamingIdentifier, in: oldEntities, name: \.name, identifier: \.renamingIdentifier) else {
                continue
            }
            if let other = claimed[match.name] {
                problems.append("entities \(other) and \(entity.name) both claim to be \(match.name) (check their renaming identifiers)")
                continue
            }
            claimed[match.name] = entity.name
            pairs.append((match, entity))
            if match.name != entity.name { entities[match.name] = entity.name }
        }
        for (before, after) in pairs {
            var renamed: [String: String] = [:]
            renamed.merge(matchProperties(before.attributes, after.attributes, entity: after.name, name: \.name, identifier: \.renamingIdentifier)) { a, _ in a
            }
            renamed.merge(matchProperties(before.relationships, after.relationships, entity: after.name, name: \.name, identifier: \.renamingIdentifier)) {
                a, _ in a
            }
            if !renamed.isEmpty { properties[before.name] = renamed }
        }
    }

    /// The old element `name`/`identifier` stands for: the one named by its renaming identifier,
    /// else the one with that old renaming identifier, else the one with the same name.
    private static func match<T>(
        _ name: String, _ identifier: String?, in candidates: [T], name nameOf: KeyPath<T, String>, identifier identifierOf: KeyPath<T, String?>
    ) -> T? {
        if let identifier, identifier != name {
            return candidates.first { $0[keyPath: nameOf] == identifier }
                ?? candidates.first { $0[keyPath: identifierOf] == identifier }
        }
        return candidates.first { $0[keyPath: nameOf] == name }
    }

    private mutating func matchProperties<T>(
        _ before: [T], _ after: [T], entity: String, name: KeyPath<T, String>, identifier: KeyPath<T, String?>
    ) -> [String: String] {
        var renamed: [String: String] = [:]
        var claimed: [String: String] = [:]
        for property in after {
            let newName = property[keyPath: name]
            guard let match = Self.match(newName, property[keyPath: identifier], in: before, name: name, identifier: identifier) else { continue }
            let oldName = match[keyPath: name]
            if let other = claimed[oldName] {
                problems.append("properties \(entity).\(other) and \(entity).\(newName) both claim to be \(oldName) (check their renaming identifiers)")
                continue
            }
            claimed[oldName] = newName
            if oldName != newName { renamed[oldName] = newName }
        }
        return renamed
    }

    /// The new name of the old entity `name`.
    package func entityName(_ name: String) -> String { entities[name] ?? name }

    /// The new name of property `name` declared by the old entity `entity`.
    func propertyName(_ name: String, of entity: String) -> String { properties[entity]?[name] ?? name }

    /// `old` with every renamed element under its new name: what the store holds, in the new
    /// model's words.
    func apply(to old: ManagedObjectModel) throws(AmbarError) -> ManagedObjectModel {
        guard !isEmpty else { return old }
        let byName = Dictionary(old.entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        /// The new name of a property of `entity` or of one of its ancestors (constraints and
        /// inverses may name inherited properties).
        func inherited(_ property: String, of entity: String) -> String {
            var current: String? = entity
            while let name = current, let description = byName[name] {
                let declared = description.attributes.contains { $0.name == property } || description.relationships.contains { $0.name == property }
                if declared { return propertyName(property, of: name) }
                current = description.parent
            }
            return property
        }
        let entities = old.entities.map { entity -> EntityDescription in
            var renamed = entity
            renamed.name = entityName(entity.name)
            renamed.parent = entity.parent.map(entityName)
            renamed.attributes = entity.attributes.map { attribute in
                var a = attribute
                a.name = propertyName(attribute.name, of: entity.name)
                return a
            }
            renamed.relationships = entity.relationships.map { relationship in
                var r = relationship
                r.name = propertyName(relationship.name, of: entity.name)
                r.destination = entityName(relationship.destination)
                r.inverse = relationship.inverse.map { inherited($0, of: relationship.destination) }
                return r
            }
            renamed.uniquenessConstraints = entity.uniquenessConstraints.map { $0.map { inherited($0, of: entity.name) } }
            return renamed
        }
        do {
            return try ManagedObjectModel(entities: entities)
        } catch {
            throw .migrationRefused(reasons: ["the renaming identifiers do not give a valid model: \(error)"])
        }
    }
}
