/// The checks a model passes before it is laid out: names (entities and properties, not
/// reserved, not declared twice or again by a descendant), parents (existing, no cycle),
/// attributes (types, defaults, derivations), relationships (destinations, inverses that agree,
/// counts) and fetched properties. Each failure names the entity and property at fault.
struct ModelValidation {
    /// The entities by name.
    let byName: [String: EntityDescription]
    /// Each entity's ancestors, nearest first.
    let ancestors: [String: [String]]
    /// The parsed derivations of derived attributes, by entity and attribute.
    let derivations: [String: [String: DerivedAttribute]]

    init(_ list: [EntityDescription], classes: [String: ManagedObject.Type]) throws(ModelIssue) {
        func issue(_ entity: String?, _ property: String? = nil, _ message: String) -> ModelIssue {
            ModelIssue(entity: entity, property: property, message: message)
        }
        var byName: [String: EntityDescription] = [:]
        for e in list {
            guard ResolvedModel.isValidIdentifier(e.name) else {
                throw issue(e.name, nil, "entity name '\(e.name)' must be letters, digits and _ and start with a letter")
            }
            guard byName[e.name] == nil else { throw issue(e.name, nil, "entity '\(e.name)' is defined twice") }
            guard !e.name.lowercased().hasPrefix("ambar_"), !e.name.hasPrefix("Z_") else {
                throw issue(e.name, nil, "entity name '\(e.name)' uses a reserved prefix (ambar_, Z_)")
            }
            byName[e.name] = e
        }
        for name in classes.keys where byName[name] == nil {
            throw issue(nil, nil, "class registered for entity '\(name)', which the model does not define")
        }

        // Ancestors, checking parents exist and that there is no cycle.
        var ancestors: [String: [String]] = [:]
        for e in list {
            var chain: [String] = []
            var current = e.parent
            while let p = current {
                guard let parent = byName[p] else {
                    throw issue(e.name, nil, "entity '\(e.name)' has parent '\(p)', which is not in the model")
                }
                guard p != e.name, !chain.contains(p) else {
                    throw issue(e.name, nil, "entity '\(e.name)' inherits from itself")
                }
                chain.append(p)
                current = parent.parent
            }
            ancestors[e.name] = chain
        }
        func chain(_ name: String) -> [String] { (ancestors[name] ?? []).reversed() + [name] }

        // Property names: valid, not reserved, and not declared again by a descendant (which
        // would hide the inherited one). Sibling sub-entities may each declare the same name, as
        // in Core Data: they share a column when the column types agree and get one each when not.
        func declaredNames(_ e: EntityDescription) -> [String] {
            let attributes: [String] = e.attributes.map(\.name)
            let relationships: [String] = e.relationships.map(\.name)
            let fetched: [String] = e.fetchedProperties.map(\.name)
            return attributes + relationships + fetched
        }
        for e in list {
            var own = Set<String>()
            var inheritedFrom: [String: String] = [:]
            for a in ancestors[e.name] ?? [] {
                for prop in byName[a].map(declaredNames) ?? [] where inheritedFrom[prop] == nil { inheritedFrom[prop] = a }
            }
            for prop in declaredNames(e) {
                guard ResolvedModel.isValidIdentifier(prop) else {
                    throw issue(e.name, prop, "property name '\(e.name).\(prop)' must be letters, digits and _ and start with a letter")
                }
                guard !ResolvedModel.reservedColumns.contains(prop), !prop.hasPrefix("Z_") else {
                    throw issue(e.name, prop, "property name '\(e.name).\(prop)' is reserved")
                }
                guard own.insert(prop).inserted else {
                    throw issue(e.name, prop, "entity '\(e.name)' declares property '\(prop)' twice")
                }
                if let owner = inheritedFrom[prop] {
                    throw issue(e.name, prop, "property '\(prop)' of '\(e.name)' is already declared by its ancestor '\(owner)'")
                }
            }
        }

        // Attributes: types, defaults and derivations.
        var derivations: [String: [String: DerivedAttribute]] = [:]
        for e in list {
            for a in e.attributes {
                if a.type == .undefined && !a.isTransient {
                    throw issue(e.name, a.name, "attribute '\(e.name).\(a.name)' has type undefined, which only a transient attribute may have")
                }
                if !a.defaultValue.isNull, a.defaultValue.coerced(to: a.type) == nil {
                    throw issue(e.name, a.name, "default value \(a.defaultValue) of '\(e.name).\(a.name)' is not \(a.type.withArticle)")
                }
                if let problem = a.validation.problem(for: a.type) {
                    throw issue(e.name, a.name, "the validation rules of '\(e.name).\(a.name)': \(problem)")
                }
                if let expression = a.derivation {
                    do {
                        derivations[e.name, default: [:]][a.name] = try DerivedAttribute(parsing: expression)
                    } catch {
                        throw issue(e.name, a.name, "derived attribute '\(e.name).\(a.name)': \(error.message)")
                    }
                }
            }
        }

        func allRelationships(_ name: String) -> [RelationshipDescription] {
            chain(name).flatMap { byName[$0]?.relationships ?? [] }
        }
        func findRelationship(_ entity: String, _ rel: String) -> RelationshipDescription? {
            allRelationships(entity).first { $0.name == rel }
        }

        // Relationships: destinations and inverses must exist and agree.
        for e in list {
            for r in e.relationships {
                guard byName[r.destination] != nil else {
                    throw issue(e.name, r.name, "relationship '\(e.name).\(r.name)' points to '\(r.destination)', which is not in the model")
                }
                if r.isOrdered && !r.isToMany {
                    throw issue(e.name, r.name, "relationship '\(e.name).\(r.name)' is ordered but not to-many")
                }
                if r.minCount < 0 || r.maxCount < 0 || (r.maxCount > 0 && r.minCount > r.maxCount) {
                    throw issue(e.name, r.name, "relationship '\(e.name).\(r.name)' has a minimum count \(r.minCount) above its maximum \(r.maxCount)")
                }
                if let inv = r.inverse {
                    guard let inverse = findRelationship(r.destination, inv) else {
                        throw issue(e.name, r.name, "relationship '\(e.name).\(r.name)' names inverse '\(r.destination).\(inv)', which does not exist")
                    }
                    guard inverse.inverse == r.name else {
                        throw issue(
                            e.name, r.name,
                            "'\(e.name).\(r.name)' and its inverse '\(r.destination).\(inv)' do not name each other (the inverse names \(inverse.inverse.map { "'\($0)'" } ?? "none"))"
                        )
                    }
                    let eAncestry = [e.name] + (ancestors[e.name] ?? [])
                    let invDest = inverse.destination
                    guard eAncestry.contains(invDest) || (ancestors[invDest] ?? []).contains(e.name) else {
                        throw issue(e.name, r.name, "inverse '\(r.destination).\(inv)' points to '\(invDest)', not to '\(e.name)'")
                    }
                }
            }
        }

        // Fetched properties name an entity of the model.
        for e in list {
            for f in e.fetchedProperties where byName[f.entityName] == nil {
                throw issue(e.name, f.name, "fetched property '\(e.name).\(f.name)' fetches '\(f.entityName)', which is not in the model")
            }
        }
        self.byName = byName
        self.ancestors = ancestors
        self.derivations = derivations
    }
}
