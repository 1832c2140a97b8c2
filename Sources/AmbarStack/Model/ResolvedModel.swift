import Foundation

/// How a relationship is kept in the relational store.
enum RelationshipMapping: Sendable, Hashable {
    /// A to-one: a column of the source's table holds the destination's primary key.
    case foreignKey(column: String)
    /// A to-many whose inverse is a to-one: the destination's table holds the source's key.
    case inverseForeignKey(destinationRoot: String, column: String)
    /// A to-many whose inverse is a to-many (or that has no inverse): a join table.
    case joinTable(table: String, ownColumn: String, otherColumn: String)
}

/// One relationship with its inherited position and storage mapping resolved.
struct ResolvedRelationship: Sendable {
    let description: RelationshipDescription
    let index: Int
    let mapping: RelationshipMapping
    /// For a to-one whose destination has sub-entities: the column holding the destination's entity.
    let entityColumn: String?
    var name: String { description.name }
    var isToMany: Bool { description.isToMany }
}

/// An entity with inherited properties resolved into fixed slots: what managed objects, the
/// store and predicates use at run time. Immutable and shared.
final class EntityLayout: Sendable {
    let name: String
    let description: EntityDescription
    let rootName: String
    /// Attributes, inherited first; an object's values array follows this order.
    let attributes: [AttributeDescription]
    let attributeIndex: [String: Int]
    /// Relationships, inherited first.
    let relationships: [ResolvedRelationship]
    let relationshipIndex: [String: Int]
    /// This entity and every entity that inherits from it, directly or not.
    let selfAndDescendants: [String]
    /// Uniqueness constraints, inherited first.
    let uniquenessConstraints: [[String]]
    /// The names of the ancestors, nearest first.
    let ancestors: [String]
    let objectClass: ManagedObject.Type

    init(
        name: String, description: EntityDescription, rootName: String,
        attributes: [AttributeDescription], relationships: [ResolvedRelationship],
        selfAndDescendants: [String], uniquenessConstraints: [[String]], ancestors: [String],
        objectClass: ManagedObject.Type
    ) {
        self.name = name
        self.description = description
        self.rootName = rootName
        self.attributes = attributes
        self.attributeIndex = Dictionary(uniqueKeysWithValues: attributes.enumerated().map { ($1.name, $0) })
        self.relationships = relationships
        self.relationshipIndex = Dictionary(uniqueKeysWithValues: relationships.enumerated().map { ($1.name, $0) })
        self.selfAndDescendants = selfAndDescendants
        self.uniquenessConstraints = uniquenessConstraints
        self.ancestors = ancestors
        self.objectClass = objectClass
    }

    /// Whether `other` is this entity or inherits from it.
    func isKind(of other: String) -> Bool { name == other || ancestors.contains(other) }
}

/// A column of an entity table (for an attribute or a to-one relationship).
struct ColumnSpec: Sendable, Hashable {
    let name: String
    let sqlType: String
    let isIndexed: Bool
}

/// A join table for a to-many relationship without a to-one inverse.
struct JoinTableSpec: Sendable, Hashable {
    let table: String
    let sourceRoot: String
    let destinationRoot: String
}

/// The validated, resolved form of a model: entity layouts, tables and join tables.
final class ResolvedModel: Sendable {
    static let reservedColumns: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]

    let entities: [String: EntityLayout]
    /// Root entities (those without a parent), sorted by name: one table each.
    let roots: [String]
    /// Columns of each root table, for the whole hierarchy, in a stable order.
    let rootColumns: [String: [ColumnSpec]]
    /// Uniqueness constraints per root table (attribute names).
    let rootUniqueness: [String: [[String]]]
    let joinTables: [JoinTableSpec]
    let classes: [String: ManagedObject.Type]

    init(entities list: [EntityDescription], classes: [String: ManagedObject.Type]) throws(AmbarError) {
        var byName: [String: EntityDescription] = [:]
        for e in list {
            guard Self.isValidIdentifier(e.name) else {
                throw .invalidModel("entity name '\(e.name)' must be letters, digits and _ and start with a letter")
            }
            guard byName[e.name] == nil else { throw .invalidModel("entity '\(e.name)' is defined twice") }
            guard !e.name.lowercased().hasPrefix("ambar_"), !e.name.hasPrefix("Z_") else {
                throw .invalidModel("entity name '\(e.name)' uses a reserved prefix (ambar_, Z_)")
            }
            byName[e.name] = e
        }
        for name in classes.keys where byName[name] == nil {
            throw .invalidModel("class registered for entity '\(name)', which the model does not define")
        }

        // Ancestors, checking parents exist and that there is no cycle.
        var ancestors: [String: [String]] = [:]
        for e in list {
            var chain: [String] = []
            var current = e.parent
            while let p = current {
                guard let parent = byName[p] else {
                    throw .invalidModel("entity '\(e.name)' has parent '\(p)', which is not in the model")
                }
                guard p != e.name, !chain.contains(p) else {
                    throw .invalidModel("entity '\(e.name)' inherits from itself")
                }
                chain.append(p)
                current = parent.parent
            }
            ancestors[e.name] = chain
        }
        func root(of name: String) -> String { ancestors[name]?.last ?? name }

        // Property names are unique across a whole hierarchy, since it shares one table.
        var hierarchyProperties: [String: [String: String]] = [:]  // root -> property -> entity
        for e in list {
            let r = root(of: e.name)
            for prop in e.attributes.map(\.name) + e.relationships.map(\.name) {
                guard Self.isValidIdentifier(prop) else {
                    throw .invalidModel("property name '\(e.name).\(prop)' must be letters, digits and _ and start with a letter")
                }
                guard !Self.reservedColumns.contains(prop), !prop.hasPrefix("Z_") else {
                    throw .invalidModel("property name '\(e.name).\(prop)' is reserved")
                }
                if let other = hierarchyProperties[r, default: [:]][prop] {
                    throw .invalidModel("property '\(prop)' is defined by both '\(other)' and '\(e.name)' in one inheritance hierarchy")
                }
                hierarchyProperties[r, default: [:]][prop] = e.name
            }
        }

        // Attributes: default values must fit their type.
        for e in list {
            for a in e.attributes where !a.defaultValue.isNull {
                guard a.defaultValue.coerced(to: a.type) != nil else {
                    throw .invalidModel("default value \(a.defaultValue) of '\(e.name).\(a.name)' is not a \(a.type.rawValue)")
                }
            }
        }

        func allAttributes(_ name: String) -> [AttributeDescription] {
            let chain = (ancestors[name] ?? []).reversed() + [name]
            return chain.flatMap { byName[$0]?.attributes ?? [] }
        }
        func allRelationships(_ name: String) -> [RelationshipDescription] {
            let chain = (ancestors[name] ?? []).reversed() + [name]
            return chain.flatMap { byName[$0]?.relationships ?? [] }
        }
        func findRelationship(_ entity: String, _ rel: String) -> RelationshipDescription? {
            allRelationships(entity).first { $0.name == rel }
        }

        // Relationships: destinations and inverses must exist and agree.
        for e in list {
            for r in e.relationships {
                guard byName[r.destination] != nil else {
                    throw .invalidModel("relationship '\(e.name).\(r.name)' points to '\(r.destination)', which is not in the model")
                }
                if let inv = r.inverse {
                    guard let inverse = findRelationship(r.destination, inv) else {
                        throw .invalidModel("relationship '\(e.name).\(r.name)' names inverse '\(r.destination).\(inv)', which does not exist")
                    }
                    guard inverse.inverse == r.name else {
                        throw .invalidModel("'\(e.name).\(r.name)' and its inverse '\(r.destination).\(inv)' do not name each other")
                    }
                    let eAncestry = [e.name] + (ancestors[e.name] ?? [])
                    let invDest = inverse.destination
                    guard eAncestry.contains(invDest) || (ancestors[invDest] ?? []).contains(e.name) else {
                        throw .invalidModel("inverse '\(r.destination).\(inv)' points to '\(invDest)', not to '\(e.name)'")
                    }
                }
            }
        }

        // Uniqueness constraints name attributes of the entity (or its ancestors).
        for e in list {
            let names = Set(allAttributes(e.name).map(\.name))
            for group in e.uniquenessConstraints {
                guard !group.isEmpty else { throw .invalidModel("entity '\(e.name)' has an empty uniqueness constraint") }
                for a in group where !names.contains(a) {
                    throw .invalidModel("uniqueness constraint of '\(e.name)' names '\(a)', which is not an attribute")
                }
            }
        }

        func mapping(entity: String, _ r: RelationshipDescription) -> RelationshipMapping {
            if !r.isToMany { return .foreignKey(column: r.name) }
            if let inv = r.inverse, let inverse = findRelationship(r.destination, inv), !inverse.isToMany {
                return .inverseForeignKey(destinationRoot: root(of: r.destination), column: inv)
            }
            // Join table, named after the canonical side of the pair.
            let owner = entityDeclaring(entity, r.name)
            let mine = "\(owner).\(r.name)"
            if let inv = r.inverse {
                let otherOwner = entityDeclaring(r.destination, inv)
                let theirs = "\(otherOwner).\(inv)"
                if theirs < mine {
                    return .joinTable(table: "Z_\(otherOwner)_\(inv)", ownColumn: "dst", otherColumn: "src")
                }
            }
            return .joinTable(table: "Z_\(owner)_\(r.name)", ownColumn: "src", otherColumn: "dst")
        }
        func entityDeclaring(_ entity: String, _ rel: String) -> String {
            for name in [entity] + (ancestors[entity] ?? []) where byName[name]?.relationships.contains(where: { $0.name == rel }) == true {
                return name
            }
            return entity
        }

        func descendants(_ name: String) -> [String] {
            list.filter { ($0.name == name) || (ancestors[$0.name] ?? []).contains(name) }.map(\.name)
        }
        func entityColumn(_ r: RelationshipDescription) -> String? {
            (!r.isToMany && descendants(r.destination).count > 1) ? "Z_ENT_\(r.name)" : nil
        }
        var layouts: [String: EntityLayout] = [:]
        for e in list {
            let rels = allRelationships(e.name).enumerated().map { i, r in
                ResolvedRelationship(description: r, index: i, mapping: mapping(entity: e.name, r), entityColumn: entityColumn(r))
            }
            let chain = (ancestors[e.name] ?? []).reversed() + [e.name]
            layouts[e.name] = EntityLayout(
                name: e.name, description: e, rootName: root(of: e.name),
                attributes: allAttributes(e.name), relationships: rels,
                selfAndDescendants: descendants(e.name),
                uniquenessConstraints: chain.flatMap { byName[$0]?.uniquenessConstraints ?? [] },
                ancestors: ancestors[e.name] ?? [],
                objectClass: classes[e.name] ?? ManagedObject.self)
        }

        var rootColumns: [String: [ColumnSpec]] = [:]
        var rootUniqueness: [String: [[String]]] = [:]
        var joins: [String: JoinTableSpec] = [:]
        let rootNames = list.filter { $0.parent == nil }.map(\.name).sorted()
        for r in rootNames {
            var columns: [ColumnSpec] = []
            for e in list where root(of: e.name) == r {
                for a in e.attributes {
                    columns.append(ColumnSpec(name: a.name, sqlType: a.type.sqlColumnType, isIndexed: a.isIndexed))
                }
                for rel in e.relationships where !rel.isToMany {
                    columns.append(ColumnSpec(name: rel.name, sqlType: "INTEGER", isIndexed: true))
                    if let column = entityColumn(rel) {
                        columns.append(ColumnSpec(name: column, sqlType: "INTEGER", isIndexed: false))
                    }
                }
                rootUniqueness[r, default: []].append(contentsOf: e.uniquenessConstraints)
                for rel in layouts[e.name]?.relationships ?? [] {
                    if case .joinTable(let table, _, _) = rel.mapping, joins[table] == nil {
                        let ownerIsSource = rel.mapping == .joinTable(table: table, ownColumn: "src", otherColumn: "dst")
                        let src = ownerIsSource ? r : root(of: rel.description.destination)
                        let dst = ownerIsSource ? root(of: rel.description.destination) : r
                        joins[table] = JoinTableSpec(table: table, sourceRoot: src, destinationRoot: dst)
                    }
                }
            }
            rootColumns[r] = columns
        }

        self.entities = layouts
        self.roots = rootNames
        self.rootColumns = rootColumns
        self.rootUniqueness = rootUniqueness
        self.joinTables = joins.values.sorted { $0.table < $1.table }
        self.classes = classes
    }

    func layout(_ name: String) throws(AmbarError) -> EntityLayout {
        guard let layout = entities[name] else { throw .unknownEntity(name) }
        return layout
    }

    static func isValidIdentifier(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII else { return false }
        return s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }
}
