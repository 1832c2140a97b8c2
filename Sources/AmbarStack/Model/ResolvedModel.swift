import Foundation

/// How a relationship is kept in the relational store.
enum RelationshipMapping: Sendable, Hashable {
    /// A to-one: a column of the source's table holds the destination's primary key.
    case foreignKey(column: String)
    /// A to-many whose inverse is a to-one: the destination's table holds the source's key.
    case inverseForeignKey(destinationRoot: String, column: String)
    /// A to-many whose inverse is a to-many (or that has no inverse): a join table.
    case joinTable(table: String, ownColumn: String, otherColumn: String)
    /// A transient relationship: in memory only.
    case transient
}

/// What is wrong with a model, and where: the entity and property (when there is one), so that a
/// model file reader can point at the element's line.
struct ModelIssue: Error, Sendable {
    let entity: String?
    let property: String?
    let message: String
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
    /// Whether the relationship keeps its destinations in an order the store records.
    var isOrdered: Bool { description.isOrdered && description.isToMany && mapping != .transient }

    /// Where the store records the order of an ordered relationship: a column of the destination
    /// table (beside the inverse's foreign key) or of the join table.
    var orderColumn: String? {
        guard isOrdered else { return nil }
        switch mapping {
        case .inverseForeignKey(_, let column): return "Z_FOK_\(column)"
        case .joinTable(_, let own, _): return "\(own)_order"
        case .foreignKey, .transient: return nil
        }
    }
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
    /// The column of each attribute (`nil` for a transient one), in attribute order.
    let attributeColumns: [String?]
    /// The column of each relationship (`nil` unless a stored to-one), in relationship order.
    let relationshipColumns: [String?]
    /// The indexes of the attributes the store keeps (all but the transient ones).
    let storedAttributes: [Int]
    /// The indexes of the transient attributes.
    let transientAttributes: [Int]
    /// The indexes of the derived attributes, with their parsed derivations.
    let derivedAttributes: [(index: Int, derivation: DerivedAttribute)]
    /// Fetched properties, inherited first.
    let fetchedProperties: [FetchedPropertyDescription]
    /// A null for every attribute: a fault's values before they load.
    let nullValues: [AttributeValue]
    /// The values a new object starts with: each attribute's default, coerced to its type.
    let insertValues: [AttributeValue]
    /// No destination for every relationship: an object's to-one slots before any is set.
    let noDestinations: [ManagedObjectID?]
    /// No loaded destinations for every relationship: an object's to-many slots before they load.
    let unloadedToMany: [Set<ManagedObjectID>?]
    /// The indexes of the to-many relationships.
    let toManyRelationships: [Int]
    /// Attribute names compared one by one (cheaper than hashing for the few attributes most
    /// entities have; see ``attributeSlot(_:)``).
    private let attributeNames: [String]

    init(
        name: String, description: EntityDescription, rootName: String,
        attributes: [AttributeDescription], relationships: [ResolvedRelationship],
        selfAndDescendants: [String], uniquenessConstraints: [[String]], ancestors: [String],
        objectClass: ManagedObject.Type, attributeColumns: [String?], relationshipColumns: [String?],
        derivedAttributes: [(index: Int, derivation: DerivedAttribute)], fetchedProperties: [FetchedPropertyDescription]
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
        self.attributeColumns = attributeColumns
        self.relationshipColumns = relationshipColumns
        self.storedAttributes = attributes.indices.filter { !attributes[$0].isTransient }
        self.transientAttributes = attributes.indices.filter { attributes[$0].isTransient }
        self.derivedAttributes = derivedAttributes
        self.fetchedProperties = fetchedProperties
        self.nullValues = Array(repeating: .null, count: attributes.count)
        self.insertValues = attributes.map { $0.defaultValue.coerced(to: $0.type) ?? .null }
        self.noDestinations = Array(repeating: nil, count: relationships.count)
        self.unloadedToMany = Array(repeating: nil, count: relationships.count)
        self.toManyRelationships = relationships.indices.filter { relationships[$0].isToMany }
        self.attributeNames = attributes.map(\.name)
    }

    /// The index of the attribute named `name`. Typed properties (`@Managed`) look their
    /// attribute up on every access: for up to 16 attributes a scan whose comparisons mostly
    /// succeed or fail on the first word (short names are stored inline) beats hashing the name.
    @inline(__always)
    func attributeSlot(_ name: String) -> Int? {
        guard attributeNames.count <= 16 else { return attributeIndex[name] }
        for i in attributeNames.indices where attributeNames[i] == name { return i }
        return nil
    }

    /// The column of the attribute at `index`, or an error saying it is transient.
    func column(ofAttribute index: Int) throws(AmbarError) -> String {
        guard let column = attributeColumns[index] else {
            throw .invalidPredicate(
                "'\(name).\(attributes[index].name)' is transient: it is not in the store, so a fetch cannot filter or sort by it (filter the fetched objects in memory instead)"
            )
        }
        return column
    }

    /// The column of the stored to-one relationship at `index`.
    func column(ofRelationship index: Int) -> String {
        relationshipColumns[index] ?? relationships[index].name
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
    /// The order columns (`src_order`, `dst_order`) for the sides that are ordered relationships.
    var orderColumns: [String] = []
}

/// The validated, resolved form of a model: entity layouts, tables and join tables.
final class ResolvedModel: Sendable {
    static let reservedColumns: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]

    let entities: [String: EntityLayout]
    /// Root entities (those without a parent), sorted by name: one table each.
    let roots: [String]
    /// Columns of each root table, for the whole hierarchy, in a stable order.
    let rootColumns: [String: [ColumnSpec]]
    /// Uniqueness constraints per root table (column names).
    let rootUniqueness: [String: [[String]]]
    /// Indexes over several columns per root table (column names, in index order).
    let rootIndexes: [String: [[String]]]
    let joinTables: [JoinTableSpec]
    let classes: [String: ManagedObject.Type]

    init(entities list: [EntityDescription], classes: [String: ManagedObject.Type]) throws(ModelIssue) {
        func issue(_ entity: String?, _ property: String? = nil, _ message: String) -> ModelIssue {
            ModelIssue(entity: entity, property: property, message: message)
        }
        let validation = try ModelValidation(list, classes: classes)
        let byName = validation.byName
        let ancestors = validation.ancestors
        let derivations = validation.derivations
        func root(of name: String) -> String { ancestors[name]?.last ?? name }
        func chain(_ name: String) -> [String] { (ancestors[name] ?? []).reversed() + [name] }
        func allAttributes(_ name: String) -> [AttributeDescription] {
            chain(name).flatMap { byName[$0]?.attributes ?? [] }
        }
        func allRelationships(_ name: String) -> [RelationshipDescription] {
            chain(name).flatMap { byName[$0]?.relationships ?? [] }
        }
        func findRelationship(_ entity: String, _ rel: String) -> RelationshipDescription? {
            allRelationships(entity).first { $0.name == rel }
        }

        // Columns, per root table: a property's column is its name, unless a sibling entity
        // already uses that name for a column of another type (then `<name>_<Entity>`).
        var attributeColumnNames: [String: [String: String]] = [:]  // entity -> attribute -> column
        var relationshipColumnNames: [String: [String: String]] = [:]
        var rootColumns: [String: [ColumnSpec]] = [:]
        let rootNames = list.filter { $0.parent == nil }.map(\.name).sorted()
        func descendants(_ name: String) -> [String] {
            list.filter { ($0.name == name) || (ancestors[$0.name] ?? []).contains(name) }.map(\.name)
        }
        func entityColumnNeeded(_ r: RelationshipDescription) -> Bool {
            !r.isToMany && !r.isTransient && descendants(r.destination).count > 1
        }
        for r in rootNames {
            var columns: [ColumnSpec] = []
            var taken: [String: Int] = [:]  // column name -> position in `columns`
            func claim(_ name: String, _ sqlType: String, _ indexed: Bool, entity: String) -> String {
                if let i = taken[name] {
                    if columns[i].sqlType == sqlType {
                        if indexed && !columns[i].isIndexed { columns[i] = ColumnSpec(name: name, sqlType: sqlType, isIndexed: true) }
                        return name
                    }
                    let own = "\(name)_\(entity)"
                    taken[own] = columns.count
                    columns.append(ColumnSpec(name: own, sqlType: sqlType, isIndexed: indexed))
                    return own
                }
                taken[name] = columns.count
                columns.append(ColumnSpec(name: name, sqlType: sqlType, isIndexed: indexed))
                return name
            }
            for e in list where root(of: e.name) == r {
                for a in e.attributes where !a.isTransient {
                    attributeColumnNames[e.name, default: [:]][a.name] = claim(a.name, a.type.sqlColumnType, a.isIndexed, entity: e.name)
                }
                for rel in e.relationships where !rel.isToMany && !rel.isTransient {
                    relationshipColumnNames[e.name, default: [:]][rel.name] = claim(rel.name, "INTEGER", true, entity: e.name)
                    if entityColumnNeeded(rel) {
                        _ = claim("Z_ENT_\(rel.name)", "INTEGER", false, entity: e.name)
                    }
                }
            }
            rootColumns[r] = columns
        }
        func attributeColumn(_ entity: String, _ attribute: String) -> String? {
            for name in chain(entity).reversed() {
                if let column = attributeColumnNames[name]?[attribute] { return column }
            }
            return nil
        }
        func relationshipColumn(_ entity: String, _ relationship: String) -> String? {
            for name in chain(entity).reversed() {
                if let column = relationshipColumnNames[name]?[relationship] { return column }
            }
            return nil
        }
        func entityDeclaring(_ entity: String, _ rel: String) -> String {
            for name in [entity] + (ancestors[entity] ?? []) where byName[name]?.relationships.contains(where: { $0.name == rel }) == true {
                return name
            }
            return entity
        }

        // Uniqueness constraints and indexes name properties of the entity (or its ancestors).
        var rootUniqueness: [String: [[String]]] = [:]
        var rootIndexes: [String: [[String]]] = [:]
        for e in list {
            let attributes = allAttributes(e.name)
            for group in e.uniquenessConstraints {
                guard !group.isEmpty else { throw issue(e.name, nil, "entity '\(e.name)' has an empty uniqueness constraint") }
                var columns: [String] = []
                for a in group {
                    guard let attribute = attributes.first(where: { $0.name == a }) else {
                        throw issue(e.name, a, "uniqueness constraint of '\(e.name)' names '\(a)', which is not an attribute")
                    }
                    guard !attribute.isTransient, let column = attributeColumn(e.name, a) else {
                        throw issue(e.name, a, "uniqueness constraint of '\(e.name)' names '\(a)', which is transient and so not in the store")
                    }
                    columns.append(column)
                }
                rootUniqueness[root(of: e.name), default: []].append(columns)
            }
            for group in e.indexes {
                guard !group.isEmpty else { throw issue(e.name, nil, "entity '\(e.name)' has an empty index") }
                var columns: [String] = []
                for property in group {
                    if let column = attributeColumn(e.name, property) ?? relationshipColumn(e.name, property) {
                        columns.append(column)
                    } else if allAttributes(e.name).contains(where: { $0.name == property }) || findRelationship(e.name, property) != nil {
                        throw issue(e.name, property, "index of '\(e.name)' covers '\(property)', which is not stored (transient, or a to-many relationship)")
                    } else {
                        throw issue(e.name, property, "index of '\(e.name)' covers '\(property)', which is not a property of '\(e.name)'")
                    }
                }
                if !(rootIndexes[root(of: e.name)] ?? []).contains(columns) { rootIndexes[root(of: e.name), default: []].append(columns) }
            }
        }

        func mapping(entity: String, _ r: RelationshipDescription) -> RelationshipMapping {
            if r.isTransient { return .transient }
            if !r.isToMany { return .foreignKey(column: relationshipColumn(entity, r.name) ?? r.name) }
            if let inv = r.inverse, let inverse = findRelationship(r.destination, inv), !inverse.isToMany, !inverse.isTransient {
                return .inverseForeignKey(destinationRoot: root(of: r.destination), column: relationshipColumn(r.destination, inv) ?? inv)
            }
            // Join table, named after the canonical side of the pair.
            let owner = entityDeclaring(entity, r.name)
            let mine = "\(owner).\(r.name)"
            if let inv = r.inverse, findRelationship(r.destination, inv)?.isTransient == false {
                let otherOwner = entityDeclaring(r.destination, inv)
                let theirs = "\(otherOwner).\(inv)"
                if theirs < mine {
                    return .joinTable(table: "Z_\(otherOwner)_\(inv)", ownColumn: "dst", otherColumn: "src")
                }
            }
            return .joinTable(table: "Z_\(owner)_\(r.name)", ownColumn: "src", otherColumn: "dst")
        }
        func entityColumn(_ r: RelationshipDescription) -> String? {
            entityColumnNeeded(r) ? "Z_ENT_\(r.name)" : nil
        }
        var layouts: [String: EntityLayout] = [:]
        for e in list {
            let rels = allRelationships(e.name).enumerated().map { i, r in
                ResolvedRelationship(description: r, index: i, mapping: mapping(entity: e.name, r), entityColumn: entityColumn(r))
            }
            let attributes = allAttributes(e.name)
            var derived: [(index: Int, derivation: DerivedAttribute)] = []
            for (i, a) in attributes.enumerated() {
                if let d = chain(e.name).lazy.compactMap({ derivations[$0]?[a.name] }).first { derived.append((i, d)) }
            }
            layouts[e.name] = EntityLayout(
                name: e.name, description: e, rootName: root(of: e.name),
                attributes: attributes, relationships: rels,
                selfAndDescendants: descendants(e.name),
                uniquenessConstraints: chain(e.name).flatMap { byName[$0]?.uniquenessConstraints ?? [] },
                ancestors: ancestors[e.name] ?? [],
                objectClass: classes[e.name] ?? ManagedObject.self,
                attributeColumns: attributes.map { $0.isTransient ? nil : attributeColumn(e.name, $0.name) },
                relationshipColumns: rels.map { rel in rel.isToMany || rel.description.isTransient ? nil : relationshipColumn(e.name, rel.name) },
                derivedAttributes: derived,
                fetchedProperties: chain(e.name).flatMap { byName[$0]?.fetchedProperties ?? [] })
        }
        // Derivations name properties the entity has.
        for (name, layout) in layouts {
            for (i, derivation) in layout.derivedAttributes {
                if let problem = derivation.problem(in: layout, lookup: { layouts[$0] }) {
                    throw issue(name, layout.attributes[i].name, "derived attribute '\(name).\(layout.attributes[i].name)': \(problem)")
                }
            }
        }

        var joins: [String: JoinTableSpec] = [:]
        for r in rootNames {
            for e in list where root(of: e.name) == r {
                for rel in layouts[e.name]?.relationships ?? [] {
                    guard case .joinTable(let table, _, _) = rel.mapping else { continue }
                    if joins[table] == nil {
                        let ownerIsSource = rel.mapping == .joinTable(table: table, ownColumn: "src", otherColumn: "dst")
                        let src = ownerIsSource ? r : root(of: rel.description.destination)
                        let dst = ownerIsSource ? root(of: rel.description.destination) : r
                        joins[table] = JoinTableSpec(table: table, sourceRoot: src, destinationRoot: dst)
                    }
                    if let column = rel.orderColumn, joins[table]?.orderColumns.contains(column) == false {
                        joins[table]?.orderColumns.append(column)
                        joins[table]?.orderColumns.sort()
                    }
                }
            }
        }
        // An ordered one-to-many keeps each destination's position beside its foreign key.
        for layout in layouts.values {
            for rel in layout.relationships where rel.isOrdered {
                guard case .inverseForeignKey(let destinationRoot, _) = rel.mapping, let column = rel.orderColumn,
                    rootColumns[destinationRoot]?.contains(where: { $0.name == column }) == false
                else { continue }
                rootColumns[destinationRoot]?.append(ColumnSpec(name: column, sqlType: "INTEGER", isIndexed: false))
            }
        }

        self.entities = layouts
        self.roots = rootNames
        self.rootColumns = rootColumns
        self.rootUniqueness = rootUniqueness
        self.rootIndexes = rootIndexes
        self.joinTables = joins.values.sorted { $0.table < $1.table }
        self.classes = classes
    }

    func layout(_ name: String) throws(AmbarError) -> EntityLayout {
        guard let layout = entities[name] else { throw .unknownEntity(name) }
        return layout
    }

    static func isValidIdentifier(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, first.properties.isAlphabetic || first == "_", first.isASCII else { return false }
        return s.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }
}
