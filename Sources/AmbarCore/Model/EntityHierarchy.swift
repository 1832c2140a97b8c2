/// The entities of a validated model and how they inherit: each entity's ancestors, root,
/// descendants and its properties with the inherited ones first.
struct EntityHierarchy {
    /// The entities, in the model's order.
    let list: [EntityDescription]
    /// The entities by name.
    let byName: [String: EntityDescription]
    /// Each entity's ancestors, nearest first.
    let ancestors: [String: [String]]

    /// The root of `name`'s hierarchy (the entity whose table holds its rows).
    func root(of name: String) -> String { ancestors[name]?.last ?? name }

    /// `name` and its ancestors, the root first.
    func chain(_ name: String) -> [String] { (ancestors[name] ?? []).reversed() + [name] }

    /// `name` and every entity that inherits from it, directly or not.
    func descendants(_ name: String) -> [String] {
        list.filter { ($0.name == name) || (ancestors[$0.name] ?? []).contains(name) }.map(\.name)
    }

    /// The attributes of `name`, inherited first.
    func allAttributes(_ name: String) -> [AttributeDescription] {
        chain(name).flatMap { byName[$0]?.attributes ?? [] }
    }

    /// The relationships of `name`, inherited first.
    func allRelationships(_ name: String) -> [RelationshipDescription] {
        chain(name).flatMap { byName[$0]?.relationships ?? [] }
    }

    /// The relationship of `entity` (declared or inherited) named `relationship`.
    func findRelationship(_ entity: String, _ relationship: String) -> RelationshipDescription? {
        allRelationships(entity).first { $0.name == relationship }
    }

    /// The entity, `entity` or one of its ancestors, that declares `relationship`.
    func entityDeclaring(_ entity: String, _ relationship: String) -> String {
        for name in [entity] + (ancestors[entity] ?? []) where byName[name]?.relationships.contains(where: { $0.name == relationship }) == true {
            return name
        }
        return entity
    }

    /// Whether a to-one relationship needs a column naming its destination's entity (the
    /// destination has sub-entities).
    func needsEntityColumn(_ relationship: RelationshipDescription) -> Bool {
        !relationship.isToMany && !relationship.isTransient && descendants(relationship.destination).count > 1
    }
}
