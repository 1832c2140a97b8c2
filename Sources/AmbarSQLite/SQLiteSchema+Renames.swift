import AmbarCore
import AmbarSQL
import Foundation
import GRDB

/// The renaming step of a lightweight migration: tables, columns and join tables renamed in
/// place, and the entity names the store keeps (entity numbers, key allocators, the ledger)
/// rewritten, so every row keeps its primary key and its object ID stays valid.
extension SQLiteSchema {
    /// What renaming left for the rest of the migration to finish.
    struct RenameOutcome {
        /// Tables whose name or columns changed: their indexes are rebuilt under the new names.
        var touchedTables: Set<String> = []
        /// Join tables moved aside, to copy into the new model's join tables once they exist.
        var joinCopies: [(from: String, to: String, swapColumns: Bool)] = []
    }

    /// Renames what `renaming` says was renamed; `renamed` is `stored` under the new names.
    /// Runs inside the migration's transaction. Swaps and chains of names are safe: every rename
    /// goes through a temporary name first.
    static func applyRenames(_ db: Database, from stored: ManagedObjectModel, as renamed: ManagedObjectModel, _ renaming: ModelRenaming) throws -> RenameOutcome
    {
        var outcome = RenameOutcome()
        guard !renaming.isEmpty else { return outcome }
        let before = stored.resolved
        let after = renamed.resolved

        // Join tables whose name or direction changed: moved aside, copied back after createTables.
        var moved: Set<String> = []
        for (name, layout) in before.entities {
            guard let newLayout = after.entities[renaming.entityName(name)] else { continue }
            for (old, new) in zip(layout.relationships, newLayout.relationships) {
                guard case .joinTable(let table, let own, _) = old.mapping,
                    case .joinTable(let newTable, let newOwn, _) = new.mapping,
                    table != newTable || own != newOwn, !moved.contains(table)
                else { continue }
                moved.insert(table)
                let aside = "ambar_migrating_\(outcome.joinCopies.count)"
                try dropIndexes(db, on: table)
                try db.execute(sql: "ALTER TABLE \(quoted(table)) RENAME TO \(quoted(aside))")
                outcome.joinCopies.append((aside, newTable, own != newOwn))
            }
        }

        // Root tables, through temporary names.
        let renamedRoots = before.roots.filter { renaming.entityName($0) != $0 }
        for root in renamedRoots {
            try db.execute(sql: "ALTER TABLE \(quoted(root)) RENAME TO \(quoted("ambar_renaming_\(root)"))")
        }
        for root in renamedRoots {
            try db.execute(sql: "ALTER TABLE \(quoted("ambar_renaming_\(root)")) RENAME TO \(quoted(renaming.entityName(root)))")
            outcome.touchedTables.insert(renaming.entityName(root))
        }

        // Columns: the two models list a root's columns in the same order.
        for root in before.roots {
            let table = renaming.entityName(root)
            let oldColumns = before.rootColumns[root] ?? []
            let newColumns = after.rootColumns[table] ?? []
            guard oldColumns.count == newColumns.count else {
                throw AmbarError.migrationRefused(reasons: ["table \(root): the renamed model does not line up with the store's columns"])
            }
            let changes = zip(oldColumns, newColumns).filter { $0.name != $1.name }
            for (index, (old, _)) in changes.enumerated() {
                try db.execute(sql: "ALTER TABLE \(quoted(table)) RENAME COLUMN \(quoted(old.name)) TO \(quoted("ambar_renaming_\(index)"))")
            }
            for (index, (_, new)) in changes.enumerated() {
                try db.execute(sql: "ALTER TABLE \(quoted(table)) RENAME COLUMN \(quoted("ambar_renaming_\(index)")) TO \(quoted(new.name))")
            }
            if !changes.isEmpty { outcome.touchedTables.insert(table) }
        }
        for table in outcome.touchedTables { try dropIndexes(db, on: table) }

        try renameEntities(db, renaming)
        try renameLedgerEntries(db, stored: stored, renaming)
        return outcome
    }

    /// Entity numbers and primary-key allocators under the new entity names.
    private static func renameEntities(_ db: Database, _ renaming: ModelRenaming) throws {
        guard !renaming.entities.isEmpty else { return }
        for (table, column) in [("ambar_entities", "name"), ("ambar_primarykeys", "root")] {
            for old in renaming.entities.keys {
                try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(column) = ?", arguments: ["ambar_renaming_\(old)", old])
            }
            for (old, new) in renaming.entities {
                try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(column) = ?", arguments: [new, "ambar_renaming_\(old)"])
            }
        }
    }

    /// The ledger's entries under the new entity and property names, so a consumer catching up
    /// after the migration reads names its model knows.
    private static func renameLedgerEntries(_ db: Database, stored: ManagedObjectModel, _ renaming: ModelRenaming) throws {
        var propertyMaps: [String: [String: String]] = [:]
        for (name, layout) in stored.resolved.entities {
            var map: [String: String] = [:]
            for entity in [name] + layout.ancestors { map.merge(renaming.properties[entity] ?? [:]) { a, _ in a } }
            if !map.isEmpty { propertyMaps[name] = map }  // by the name the ledger holds: the old one
        }
        guard !renaming.entities.isEmpty || !propertyMaps.isEmpty else { return }
        let update = try db.cachedStatement(sql: "UPDATE ambar_transactions SET changes = ? WHERE token = ?")
        let rows = try Row.fetchAll(db, sql: "SELECT token, changes FROM ambar_transactions WHERE changes IS NOT NULL")
        for row in rows {
            let changes: Data = row["changes"]
            let rewritten = try LedgerChangeEncoding.renaming(
                changes, location: db.description, entity: renaming.entityName,
                properties: { entity, names in names.map { propertyMaps[entity]?[$0] ?? $0 } })
            if rewritten != changes { try update.execute(arguments: [rewritten, row["token"] as Int64]) }
        }
    }

    /// Drops the indexes the store created on `table` (not SQLite's own), to be created again.
    static func dropIndexes(_ db: Database, on table: String, keeping kept: Set<String> = []) throws {
        let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", arguments: [table])
        for name in names where !kept.contains(name) {
            try db.execute(sql: "DROP INDEX \(quoted(name))")
        }
    }

    /// Copies the join tables moved aside by ``applyRenames(_:from:as:_:)`` into the new ones
    /// (which must exist by now), then drops the old.
    static func finishJoinCopies(_ db: Database, _ outcome: RenameOutcome) throws {
        for copy in outcome.joinCopies {
            let columns = copy.swapColumns ? "dst, src" : "src, dst"
            try db.execute(sql: "INSERT INTO \(quoted(copy.to)) (src, dst) SELECT \(columns) FROM \(quoted(copy.from))")
            try db.execute(sql: "DROP TABLE \(quoted(copy.from))")
        }
    }
}
