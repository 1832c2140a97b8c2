import AmbarCore

/// The uniqueness constraints a migration adds, checked against the rows before their unique
/// indexes are made: rows that already share the constrained values refuse the migration with
/// a reason, rather than failing on the index (the same on both stores).
package enum UniquenessCheck {
    /// The uniqueness constraints `model` has and `stored` (a store's model, under the new names)
    /// has not: root table and column names.
    package static func added(from stored: ManagedObjectModel, to model: ManagedObjectModel) -> [(table: String, columns: [String])] {
        let before = stored.resolved.rootUniqueness
        var added: [(table: String, columns: [String])] = []
        for (table, groups) in model.resolved.rootUniqueness.sorted(by: { $0.key < $1.key }) {
            let existing = Set((before[table] ?? []).map(Set.init))
            for group in groups where !existing.contains(Set(group)) { added.append((table, group)) }
        }
        return added
    }

    /// A query for how many sets of values of `columns` more than one row of `table` shares
    /// (rows with a null among them are not constrained): 0 when the unique index can be made.
    package static func duplicatesQuery(table: String, columns: [String]) -> String {
        let list = columns.map(quoted).joined(separator: ", ")
        let present = columns.map { "\(quoted($0)) IS NOT NULL" }.joined(separator: " AND ")
        return "SELECT COUNT(*) FROM (SELECT 1 FROM \(quoted(table)) WHERE \(present) GROUP BY \(list) HAVING COUNT(*) > 1) AS duplicates"
    }

    /// Why a migration is refused when `count` sets of values of `columns` are shared.
    package static func refusal(table: String, columns: [String], count: Int64) -> AmbarError {
        .migrationRefused(reasons: [
            "the new uniqueness constraint on \(table)(\(columns.joined(separator: ", "))) is broken by \(count) set\(count == 1 ? "" : "s") of values that several rows share; remove the duplicates with the old model first (a SwiftData migration stage's willMigrate, for one), then open the store with the new model"
        ])
    }
}
