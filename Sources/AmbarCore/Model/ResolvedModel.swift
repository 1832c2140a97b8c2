import Foundation

/// The validated, resolved form of a model: entity layouts, tables and join tables.
package final class ResolvedModel: Sendable {
    static let reservedColumns: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]

    package let entities: [String: EntityLayout]
    /// Root entities (those without a parent), sorted by name: one table each.
    package let roots: [String]
    /// Columns of each root table, for the whole hierarchy, in a stable order.
    package let rootColumns: [String: [ColumnSpec]]
    /// Uniqueness constraints per root table (column names).
    package let rootUniqueness: [String: [[String]]]
    /// Indexes over several columns per root table (column names, in index order).
    package let rootIndexes: [String: [[String]]]
    package let joinTables: [JoinTableSpec]
    let classes: [String: ManagedObject.Type]

    /// Validates the entities (``ModelValidation``), then lays them out: columns per root table,
    /// constraints and indexes, each entity's layout with its relationships' storage, and join
    /// tables.
    init(entities list: [EntityDescription], classes: [String: ManagedObject.Type]) throws(ModelIssue) {
        let validation = try ModelValidation(list, classes: classes)
        let hierarchy = EntityHierarchy(list: list, byName: validation.byName, ancestors: validation.ancestors)
        let rootNames = list.filter { $0.parent == nil }.map(\.name).sorted()
        var columns = ColumnAssignment(hierarchy, roots: rootNames)
        let constraints = try Self.constraints(hierarchy, columns)
        let layouts = try Self.layouts(hierarchy, columns, derivations: validation.derivations, classes: classes)
        // An ordered one-to-many keeps each destination's position beside its foreign key.
        for layout in layouts.values {
            for rel in layout.relationships where rel.isOrdered {
                guard case .inverseForeignKey(let destinationRoot, _) = rel.mapping, let column = rel.orderColumn else { continue }
                columns.addColumn(ColumnSpec(name: column, sqlType: "INTEGER", isIndexed: false), toRoot: destinationRoot)
            }
        }
        self.entities = layouts
        self.roots = rootNames
        self.rootColumns = columns.rootColumns
        self.rootUniqueness = constraints.uniqueness
        self.rootIndexes = constraints.indexes
        self.joinTables = Self.joinTables(hierarchy, roots: rootNames, layouts: layouts)
        self.classes = classes
    }

    /// The uniqueness constraints and indexes of each root table, as column names. They name
    /// properties of the entity (or its ancestors) that are stored.
    private static func constraints(
        _ hierarchy: EntityHierarchy, _ columns: ColumnAssignment
    ) throws(ModelIssue) -> (uniqueness: [String: [[String]]], indexes: [String: [[String]]]) {
        func issue(_ entity: String, _ property: String?, _ message: String) -> ModelIssue {
            ModelIssue(entity: entity, property: property, message: message)
        }
        var uniqueness: [String: [[String]]] = [:]
        var indexes: [String: [[String]]] = [:]
        for e in hierarchy.list {
            let attributes = hierarchy.allAttributes(e.name)
            let root = hierarchy.root(of: e.name)
            for group in e.uniquenessConstraints {
                guard !group.isEmpty else { throw issue(e.name, nil, "entity '\(e.name)' has an empty uniqueness constraint") }
                var names: [String] = []
                for a in group {
                    // An attribute, or a to-one relationship (its foreign key), as Core Data allows.
                    if let relationship = hierarchy.findRelationship(e.name, a) {
                        guard !relationship.isToMany else {
                            let why = "a to-many relationship (only attributes and to-one relationships can be unique)"
                            throw issue(e.name, a, "uniqueness constraint of '\(e.name)' names '\(a)', \(why)")
                        }
                        guard !relationship.isTransient, let column = columns.relationshipColumn(e.name, a) else {
                            throw issue(e.name, a, "uniqueness constraint of '\(e.name)' names '\(a)', which is transient and so not in the store")
                        }
                        names.append(column)
                        continue
                    }
                    guard let attribute = attributes.first(where: { $0.name == a }) else {
                        throw issue(e.name, a, "uniqueness constraint of '\(e.name)' names '\(a)', which is neither an attribute nor a to-one relationship")
                    }
                    guard !attribute.isTransient, let column = columns.attributeColumn(e.name, a) else {
                        throw issue(e.name, a, "uniqueness constraint of '\(e.name)' names '\(a)', which is transient and so not in the store")
                    }
                    names.append(column)
                }
                uniqueness[root, default: []].append(names)
            }
            for group in e.indexes {
                guard !group.isEmpty else { throw issue(e.name, nil, "entity '\(e.name)' has an empty index") }
                var names: [String] = []
                for property in group {
                    if let column = columns.attributeColumn(e.name, property) ?? columns.relationshipColumn(e.name, property) {
                        names.append(column)
                    } else if attributes.contains(where: { $0.name == property }) || hierarchy.findRelationship(e.name, property) != nil {
                        throw issue(e.name, property, "index of '\(e.name)' covers '\(property)', which is not stored (transient, or a to-many relationship)")
                    } else {
                        throw issue(e.name, property, "index of '\(e.name)' covers '\(property)', which is not a property of '\(e.name)'")
                    }
                }
                if !(indexes[root] ?? []).contains(names) { indexes[root, default: []].append(names) }
            }
        }
        return (uniqueness, indexes)
    }

    /// How `entity`'s relationship `r` is stored: a column of its own table, the inverse's
    /// column in the destination's table, or a join table named after the canonical side of
    /// the pair.
    private static func mapping(_ hierarchy: EntityHierarchy, _ columns: ColumnAssignment, entity: String, _ r: RelationshipDescription) -> RelationshipMapping
    {
        if r.isTransient { return .transient }
        if !r.isToMany { return .foreignKey(column: columns.relationshipColumn(entity, r.name) ?? r.name) }
        if let inv = r.inverse, let inverse = hierarchy.findRelationship(r.destination, inv), !inverse.isToMany, !inverse.isTransient {
            return .inverseForeignKey(destinationRoot: hierarchy.root(of: r.destination), column: columns.relationshipColumn(r.destination, inv) ?? inv)
        }
        let owner = hierarchy.entityDeclaring(entity, r.name)
        let mine = "\(owner).\(r.name)"
        if let inv = r.inverse, hierarchy.findRelationship(r.destination, inv)?.isTransient == false {
            let otherOwner = hierarchy.entityDeclaring(r.destination, inv)
            let theirs = "\(otherOwner).\(inv)"
            if theirs < mine {
                return .joinTable(table: "Z_\(otherOwner)_\(inv)", ownColumn: "dst", otherColumn: "src")
            }
        }
        return .joinTable(table: "Z_\(owner)_\(r.name)", ownColumn: "src", otherColumn: "dst")
    }

    /// Each entity's layout: inherited properties in fixed slots, their columns, relationship
    /// storage, derivations (checked to name properties the entity has) and class.
    private static func layouts(
        _ hierarchy: EntityHierarchy, _ columns: ColumnAssignment, derivations: [String: [String: DerivedAttribute]],
        classes: [String: ManagedObject.Type]
    ) throws(ModelIssue) -> [String: EntityLayout] {
        var layouts: [String: EntityLayout] = [:]
        for e in hierarchy.list {
            let chain = hierarchy.chain(e.name)
            let rels = hierarchy.allRelationships(e.name).enumerated().map { i, r in
                ResolvedRelationship(
                    description: r, index: i, mapping: mapping(hierarchy, columns, entity: e.name, r),
                    entityColumn: hierarchy.needsEntityColumn(r) ? "Z_ENT_\(r.name)" : nil)
            }
            let attributes = hierarchy.allAttributes(e.name)
            var derived: [(index: Int, derivation: DerivedAttribute)] = []
            for (i, a) in attributes.enumerated() {
                if let d = chain.lazy.compactMap({ derivations[$0]?[a.name] }).first { derived.append((i, d)) }
            }
            layouts[e.name] = EntityLayout(
                name: e.name, description: e, rootName: hierarchy.root(of: e.name),
                attributes: attributes, relationships: rels,
                selfAndDescendants: hierarchy.descendants(e.name),
                uniquenessConstraints: chain.flatMap { hierarchy.byName[$0]?.uniquenessConstraints ?? [] },
                ancestors: hierarchy.ancestors[e.name] ?? [],
                objectClass: classes[e.name] ?? ManagedObject.self,
                attributeColumns: attributes.map { $0.isTransient ? nil : columns.attributeColumn(e.name, $0.name) },
                relationshipColumns: rels.map { rel in rel.isToMany || rel.description.isTransient ? nil : columns.relationshipColumn(e.name, rel.name) },
                derivedAttributes: derived,
                fetchedProperties: chain.flatMap { hierarchy.byName[$0]?.fetchedProperties ?? [] })
        }
        for (name, layout) in layouts {
            for (i, derivation) in layout.derivedAttributes {
                if let problem = derivation.problem(in: layout, lookup: { layouts[$0] }) {
                    throw ModelIssue(
                        entity: name, property: layout.attributes[i].name,
                        message: "derived attribute '\(name).\(layout.attributes[i].name)': \(problem)")
                }
            }
        }
        return layouts
    }

    /// The join tables of the many-to-many relationships (and of to-many ones without an
    /// inverse), with the order columns of the sides that are ordered.
    private static func joinTables(_ hierarchy: EntityHierarchy, roots: [String], layouts: [String: EntityLayout]) -> [JoinTableSpec] {
        var joins: [String: JoinTableSpec] = [:]
        for r in roots {
            for e in hierarchy.list where hierarchy.root(of: e.name) == r {
                for rel in layouts[e.name]?.relationships ?? [] {
                    guard case .joinTable(let table, _, _) = rel.mapping else { continue }
                    if joins[table] == nil {
                        let ownerIsSource = rel.mapping == .joinTable(table: table, ownColumn: "src", otherColumn: "dst")
                        let src = ownerIsSource ? r : hierarchy.root(of: rel.description.destination)
                        let dst = ownerIsSource ? hierarchy.root(of: rel.description.destination) : r
                        joins[table] = JoinTableSpec(table: table, sourceRoot: src, destinationRoot: dst)
                    }
                    if let column = rel.orderColumn, joins[table]?.orderColumns.contains(column) == false {
                        joins[table]?.orderColumns.append(column)
                        joins[table]?.orderColumns.sort()
                    }
                }
            }
        }
        return joins.values.sorted { $0.table < $1.table }
    }

    package func layout(_ name: String) throws(AmbarError) -> EntityLayout {
        guard let layout = entities[name] else { throw .unknownEntity(name) }
        return layout
    }

    package static func isValidIdentifier(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first.properties.isAlphabetic || first == "_", first.isASCII else { return false }
        return s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }

    /// Why `key` cannot sort objects of `entity` (a stored attribute, optionally behind to-one
    /// relationships), or nil when it can.
    func sortKeyProblem(_ key: String, from entity: String) -> String? {
        guard var layout = entities[entity] else { return "'\(key)' of '\(entity)', which is not in the model" }
        let parts = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (n, name) in parts.enumerated() {
            if n == parts.count - 1 {
                guard let i = layout.attributeIndex[name] else { return "'\(key)', but '\(layout.name)' has no attribute '\(name)'" }
                return layout.attributes[i].isTransient ? "'\(key)', a transient attribute (not in the store)" : nil
            }
            guard let i = layout.relationshipIndex[name], !layout.relationships[i].isToMany,
                let next = entities[layout.relationships[i].description.destination]
            else { return "'\(key)', but '\(name)' is not a to-one relationship of '\(layout.name)'" }
            layout = next
        }
        return "an empty key"
    }
}
