import AmbarCore
import Foundation

extension SaveWork {
    /// Applies the delete rules of the deleted objects' to-many relationships to the rows the
    /// saving context did not know about, then removes the deleted rows' join rows.
    ///
    /// A context applies delete rules to the destinations it read. Another process can link a new
    /// destination to the object after that read (a task gains a notice while its project is
    /// being deleted): without this step the new row would survive, pointing at a deleted object.
    /// Inside the save's write transaction the store's rows are the truth, so here each deleted
    /// object's destinations are read again and the rule applies to the ones this save does not
    /// already delete or move elsewhere (an update that sets the inverse):
    /// - `cascade` deletes them too (and applies their own rules in turn);
    /// - `nullify` clears their inverse (a foreign key; a join row goes with the deleted row);
    /// - `deny` refuses the save with ``AmbarError/validation(object:property:reason:)``;
    /// - `noAction` leaves them.
    ///
    /// One query per deleted entity and relationship (destinations are read in batches), so a
    /// large delete does not cost a query per object.
    mutating func applyDeleteRulesToRowsNotRead() throws {
        guard !deletedInThisSave.isEmpty else { return }
        var handled = Set(changes.deletes.map(\.id))
        var updates: [ManagedObjectID: UpdateChange] = [:]
        for update in changes.updates { updates[update.id] = update }
        var pending = Array(deletedInThisSave)
        while !pending.isEmpty {
            var byEntity: [String: [Int64]] = [:]
            for id in pending {
                if let pk = id.primaryKey { byEntity[id.entityName, default: []].append(pk) }
            }
            pending = []
            for (entity, keys) in byEntity.sorted(by: { $0.key < $1.key }) {
                guard let layout = resolved.entities[entity] else { continue }
                for relationship in layout.relationships where relationship.isToMany {
                    let rule = relationship.description.deleteRule
                    guard rule != .noAction else { continue }
                    let found = try destinationsNotRead(of: relationship, owners: keys.sorted(), handled: handled, updates: updates)
                    for (owner, row) in found {
                        handled.insert(row.id)
                        switch rule {
                        case .deny:
                            let ownerID = ManagedObjectID(entityName: entity, storeIdentifier: db.storeIdentifier, primaryKey: owner)
                            throw AmbarError.validation(
                                object: ownerID, property: relationship.name,
                                reason:
                                    "its delete rule is deny, and another save linked \(row.id) to it since this context read the relationship; nothing was written (refresh the object and decide again)"
                            )
                        case .cascade:
                            try deleteByRule(row.id)
                            pending.append(row.id)
                        case .nullify:
                            try nullifyByRule(row, inverseOf: relationship)
                        case .noAction:
                            break
                        }
                    }
                }
            }
        }
        for id in deletedInThisSave.sorted(by: { ($0.entityName, $0.primaryKey ?? 0) < ($1.entityName, $1.primaryKey ?? 0) }) {
            guard let layout = resolved.entities[id.entityName], let pk = id.primaryKey else { continue }
            try deleteJoinRows(root: layout.rootName, pk: pk)
        }
    }

    /// The destinations of `relationship` for the deleted `owners` that this save neither deletes
    /// nor moves elsewhere (`updates` setting their inverse, or removing their join row), each
    /// with its owner's key.
    private func destinationsNotRead(
        of relationship: ResolvedRelationship, owners: [Int64], handled: Set<ManagedObjectID>, updates: [ManagedObjectID: UpdateChange]
    ) throws -> [(owner: Int64, row: StoreRow)] {
        guard let destination = resolved.entities[relationship.description.destination] else { return [] }
        let destinationEntities = Set(destination.selfAndDescendants)
        func wanted(_ row: StoreRow) -> Bool {
            destinationEntities.contains(row.id.entityName) && !handled.contains(row.id) && !deletedInThisSave.contains(row.id)
        }
        switch relationship.mapping {
        case .inverseForeignKey(let destinationRoot, let column):
            guard let rootLayout = resolved.entities[destinationRoot] else { return [] }
            let inverse = relationship.description.inverse
            return try db.rows(rootLayout, columns: [column], matching: owners.map { [.integer($0)] }).compactMap { row in
                guard wanted(row) else { return nil }
                // The row's own layout says which of its to-ones is the inverse (a sibling entity
                // may keep another relationship in the same column).
                guard let rowLayout = resolved.entities[row.id.entityName], let inverse, let i = rowLayout.relationshipIndex[inverse],
                    rowLayout.relationshipColumns[i] == column, let owner = row.toOne[safe: i]??.primaryKey
                else { return nil }
                // This save sets its inverse itself (moves it elsewhere, or clears it).
                if updates[row.id]?.changedToOne.contains(i) == true { return nil }
                return (owner, row)
            }
        case .joinTable(let table, let own, let other):
            // A join row goes with its deleted owner, which is what nullify means here.
            guard relationship.description.deleteRule != .nullify, let rootLayout = resolved.entities[destination.rootName] else { return [] }
            let removed = Set(
                changes.joins.filter { !$0.isInsert && $0.relationship == relationship.name }.compactMap { change in
                    change.owner.primaryKey.flatMap { o in change.destination.primaryKey.map { JoinPair(owner: o, destination: $0) } }
                })
            // Destinations this save already deletes are known by key; the others (rare: linked
            // since the context read the relationship) are read one by one.
            let root = destination.rootName
            var known = Set<Int64>()
            for id in handled.union(deletedInThisSave) where resolved.entities[id.entityName]?.rootName == root {
                if let pk = id.primaryKey { known.insert(pk) }
            }
            let pairs = try db.joinRows(table: table, ownColumn: own, otherColumn: other, owners: owners).filter {
                !removed.contains($0) && !known.contains($0.destination)
            }
            return try pairs.compactMap { pair in
                try db.currentRow(rootLayout, primaryKey: pair.destination).flatMap { wanted($0) ? (pair.owner, $0) : nil }
            }
        case .foreignKey, .transient:
            return []
        }
    }

    /// Deletes a row no context asked to delete, because a cascade rule reached it.
    private mutating func deleteByRule(_ id: ManagedObjectID) throws {
        guard let layout = resolved.entities[id.entityName], let pk = id.primaryKey else { return }
        guard try db.deleteRow(root: layout.rootName, primaryKey: pk, expectedVersion: nil) else { return }
        deletedInThisSave.insert(id)
        outcome.deleted.insert(id)
        outcome.deletedByRule.insert(id)
        ledger.record(id, .delete)
    }

    /// Clears the inverse of `relationship` (a foreign key) in a row no context asked to change.
    private mutating func nullifyByRule(_ row: StoreRow, inverseOf relationship: ResolvedRelationship) throws {
        guard let layout = resolved.entities[row.id.entityName], let pk = row.id.primaryKey, let inverse = relationship.description.inverse,
            let i = layout.relationshipIndex[inverse]
        else { return }
        let version = row.version + 1
        guard
            try db.updateRow(
                root: layout.rootName, primaryKey: pk, version: version, assignments: toOneColumns(layout.relationships[i], nil), expectedVersion: nil)
        else { return }
        outcome.updated.insert(row.id)
        outcome.nullifiedByRule.insert(row.id)
        ledger.record(row.id, .update, properties: [inverse])
    }
}

/// One row of a join table, oriented from the owner's side.
package struct JoinPair: Hashable {
    let owner: Int64
    let destination: Int64

    /// Made from its parts, by the modules that read and write stores.
    package init(owner: Int64, destination: Int64) {
        self.owner = owner
        self.destination = destination
    }
}
