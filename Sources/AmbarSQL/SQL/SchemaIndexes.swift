import AmbarCore

/// The indexes a model asks for, the same in both stores.
package enum SchemaIndexes {
    /// The indexes `model` wants, by table: name and CREATE statement. Index names are global in
    /// SQLite (and per schema in PostgreSQL), so each is prefixed with its table's name.
    package static func indexes(of model: ManagedObjectModel) -> [String: [(name: String, sql: String)]] {
        let resolved = model.resolved
        var result: [String: [(name: String, sql: String)]] = [:]
        func add(_ table: String, _ name: String, unique: Bool = false, _ columns: [String]) {
            let sql =
                "CREATE \(unique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(quoted(name)) ON \(quoted(table)) (\(columns.map(quoted).joined(separator: ", ")))"
            result[table, default: []].append((name, sql))
        }
        for root in resolved.roots {
            if resolved.entities[root]?.selfAndDescendants.count ?? 1 > 1 { add(root, "\(root)_Z_ENT", ["Z_ENT"]) }
            for column in resolved.rootColumns[root] ?? [] where column.isIndexed {
                add(root, "\(root)_\(column.name)", [column.name])
            }
            for group in resolved.rootUniqueness[root] ?? [] {
                add(root, "\(root)_unique_\(group.joined(separator: "_"))", unique: true, group)
            }
            for group in resolved.rootIndexes[root] ?? [] {
                add(root, "\(root)_\(group.joined(separator: "_"))", group)
            }
        }
        for join in resolved.joinTables { add(join.table, "\(join.table)_dst", ["dst", "src"]) }
        return result
    }
}
