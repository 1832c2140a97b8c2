/// The columns of each root table, for its whole hierarchy: a property's column is its name,
/// unless a sibling entity already uses that name for a column of another type (then
/// `<name>_<Entity>`).
struct ColumnAssignment {
    /// Columns of each root table, in a stable order.
    private(set) var rootColumns: [String: [ColumnSpec]] = [:]
    private var attributeColumns: [String: [String: String]] = [:]  // entity -> attribute -> column
    private var relationshipColumns: [String: [String: String]] = [:]  // entity -> to-one -> column
    private let hierarchy: EntityHierarchy

    init(_ hierarchy: EntityHierarchy, roots: [String]) {
        self.hierarchy = hierarchy
        for root in roots {
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
            for e in hierarchy.list where hierarchy.root(of: e.name) == root {
                for a in e.attributes where !a.isTransient {
                    attributeColumns[e.name, default: [:]][a.name] = claim(a.name, a.type.sqlColumnType, a.isIndexed, entity: e.name)
                }
                for rel in e.relationships where !rel.isToMany && !rel.isTransient {
                    relationshipColumns[e.name, default: [:]][rel.name] = claim(rel.name, "INTEGER", true, entity: e.name)
                    if hierarchy.needsEntityColumn(rel) {
                        _ = claim("Z_ENT_\(rel.name)", "INTEGER", false, entity: e.name)
                    }
                }
            }
            rootColumns[root] = columns
        }
    }

    /// The column of `entity`'s attribute (declared or inherited); `nil` when it is not stored.
    func attributeColumn(_ entity: String, _ attribute: String) -> String? {
        for name in hierarchy.chain(entity).reversed() {
            if let column = attributeColumns[name]?[attribute] { return column }
        }
        return nil
    }

    /// The column of `entity`'s to-one relationship (declared or inherited); `nil` when it is not
    /// stored in `entity`'s table.
    func relationshipColumn(_ entity: String, _ relationship: String) -> String? {
        for name in hierarchy.chain(entity).reversed() {
            if let column = relationshipColumns[name]?[relationship] { return column }
        }
        return nil
    }

    /// Adds a column to a root table, unless it has one of that name.
    mutating func addColumn(_ column: ColumnSpec, toRoot root: String) {
        guard rootColumns[root]?.contains(where: { $0.name == column.name }) == false else { return }
        rootColumns[root]?.append(column)
    }
}
