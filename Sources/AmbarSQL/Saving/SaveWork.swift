import AmbarCore
import Foundation

/// The rules of one save, for every backend: primary keys assigned, inserts that collide on a
/// uniqueness constraint resolved, then deletes, updates (each at the version the context read, so
/// a row changed by anyone since is caught), inserts, join rows and orders. Conflicts are resolved
/// by the change set's merge policy; under `.error` every conflict is collected and the save
/// throws, so the backend rolls the transaction back.
package struct SaveWork<Transaction: SaveTransaction> {
    let model: ManagedObjectModel
    let db: Transaction
    let changes: ChangeSet
    var outcome = SaveOutcome()
    /// Temporary (or merged) IDs and what they resolve to.
    var idMap: [ManagedObjectID: ManagedObjectID] = [:]
    /// How many inserts kept their (already permanent) ID in `idMap`.
    var insertsKeepingTheirID = 0
    /// The ID each insert was given by ``assignPrimaryKeys()``, in the change set's order (its
    /// own when it kept it); `idMap` holds the same, and more once uniqueness merged inserts.
    var assignedIDs: [ManagedObjectID] = []
    /// Inserts to skip because they resolved to an existing row.
    var skipInsert = Set<ManagedObjectID>()
    var conflicts: [MergeConflict] = []
    var deletedInThisSave = Set<ManagedObjectID>()
    var ledger: LedgerEntry
    /// Whether inserts go to the store without looking up the holders of their unique values
    /// first; a refusal then throws ``OptimisticInsertRefused``.
    let insertsOptimistically: Bool
    /// The layouts of the changes' entities, looked up once per run of one entity.
    var layouts: LayoutsByID

    init(model: ManagedObjectModel, transaction: Transaction, changes: ChangeSet, insertsOptimistically: Bool = false) {
        self.model = model
        self.db = transaction
        self.changes = changes
        self.ledger = LedgerEntry(author: changes.author, contextName: changes.contextName)
        self.insertsOptimistically = insertsOptimistically
        self.layouts = LayoutsByID(model.resolved)
    }

    /// Applies `changes` in the transaction and returns the outcome.
    ///
    /// An import mostly inserts rows whose unique values nobody holds. When the save inserts
    /// enough such rows (``SaveTransaction/optimisticInsertMinimum``) and changes or deletes
    /// nothing in their tables (an update or delete could free a value an insert takes, which the
    /// merge policies resolve against the rows as they were before the save), the rows are
    /// inserted inside a savepoint with the store's unique indexes as the only check (no savepoint
    /// when the save's only write is that one row: a refused INSERT writes nothing). If the store
    /// refuses one, the savepoint is rolled back and the save runs again, looking the holders up
    /// first, so every conflict is resolved by the merge policy exactly as without the attempt.
    package static func perform(model: ManagedObjectModel, transaction: Transaction, changes: ChangeSet) throws -> SaveOutcome {
        if mayInsertOptimistically(changes, model.resolved, minimum: transaction.optimisticInsertMinimum) {
            var work = SaveWork(model: model, transaction: transaction, changes: changes, insertsOptimistically: true)
            // A save whose only write is one row needs no savepoint: a refused INSERT writes
            // nothing, and nothing was written before it.
            let onlyOneRow = changes.inserts.count == 1 && changes.updates.isEmpty && changes.deletes.isEmpty
            let needsSavepoint = !(onlyOneRow && changes.joins.isEmpty && changes.orders.isEmpty)
            if needsSavepoint { try transaction.execute(.begin) }
            do {
                try work.run()
                if needsSavepoint { try transaction.execute(.release) }
                return work.outcome
            } catch is OptimisticInsertRefused {
                // Only the refusal is undone here, then the save runs again with the holders
                // looked up first; any other error leaves, and the whole transaction rolls back.
                if needsSavepoint {
                    try transaction.execute(.rollBack)
                    try transaction.execute(.release)
                }
            }
        }
        var work = SaveWork(model: model, transaction: transaction, changes: changes)
        try work.run()
        return work.outcome
    }

    /// Whether the optimistic attempt applies: at least `minimum` inserts into tables with
    /// uniqueness constraints, and no update or delete in those tables.
    static func mayInsertOptimistically(_ changes: ChangeSet, _ resolved: ResolvedModel, minimum: Int) -> Bool {
        var constrainedRoots = Set<String>()
        var count = 0
        var layouts = LayoutsByID(resolved)
        var last: EntityLayout?
        for insert in changes.inserts {
            guard let layout = layouts.layout(of: insert.id), !layout.uniquenessConstraints.isEmpty else { continue }
            if layout !== last { constrainedRoots.insert(layout.rootName) }
            last = layout
            count += 1
        }
        guard count >= minimum, count > 0 else { return false }
        func touchesConstrainedTable(_ id: ManagedObjectID) -> Bool {
            layouts.layout(of: id).map { constrainedRoots.contains($0.rootName) } ?? true
        }
        return !changes.updates.contains { touchesConstrainedTable($0.id) } && !changes.deletes.contains { touchesConstrainedTable($0.id) }
    }

    var resolved: ResolvedModel { model.resolved }

    func resolve(_ id: ManagedObjectID) -> ManagedObjectID { idMap[id] ?? id }

    mutating func run() throws {
        if let key = changes.idempotencyKey, let token = try db.receiptToken(key) {
            throw AmbarError.alreadySaved(idempotencyKey: key, token: token)
        }
        try assignPrimaryKeys()
        if !insertsOptimistically { try resolveUniqueness() }
        for delete in changes.deletes { try apply(delete) }
        try applyDeleteRulesToRowsNotRead()
        for update in changes.updates { try apply(update) }
        try checkDestinationsExist()
        try applyInserts()
        try applyJoins()
        try applyOrders()
        if !conflicts.isEmpty { throw AmbarError.mergeConflict(conflicts) }
        // The map as it is when no insert kept its ID (it then maps every ID to another).
        outcome.permanentIDs = insertsKeepingTheirID == 0 ? idMap : idMap.filter { $0.key != $0.value }
        // In order, as the keys were given, unless uniqueness merged inserts into other rows.
        outcome.insertedIDs = skipInsert.isEmpty ? assignedIDs : changes.inserts.map { resolve($0.id) }
        outcome.token = try db.writeLedger(ledger)
        if let key = changes.idempotencyKey {
            try db.writeReceipt(key, token: outcome.token ?? 0)
        }
        if let move = changes.consumerMove {
            try db.moveConsumer(move)
            if !move.outbox.isEmpty { try db.writeOutbox(move) }
        }
    }

    // MARK: Keys and constraints

    mutating func assignPrimaryKeys() throws {
        // The positions in `changes.inserts` of the inserts of each root table that need a key.
        var pending: [String: [Int]] = [:]
        // The positions of a run of one root table, added to `pending` when the run ends.
        var run: (root: String, positions: [Int])?
        assignedIDs.reserveCapacity(changes.inserts.count)
        for (position, insert) in changes.inserts.enumerated() {
            guard let layout = layouts.layout(of: insert.id) else { throw AmbarError.unknownEntity(insert.id.entityName) }
            assignedIDs.append(insert.id)
            if insert.id.isTemporaryID {
                if run?.root != layout.rootName {
                    if let run { pending[run.root, default: []].append(contentsOf: run.positions) }
                    run = (layout.rootName, [])
                }
                run?.positions.append(position)
            } else {
                idMap[insert.id] = insert.id
                insertsKeepingTheirID += 1
            }
        }
        if let run { pending[run.root, default: []].append(contentsOf: run.positions) }
        var scopes = PermanentScopes(storeIdentifier: db.storeIdentifier)
        for (root, positions) in pending {
            let keys = try db.allocate(root: root, count: positions.count)
            for (key, position) in zip(keys, positions) {
                let id = changes.inserts[position].id
                let permanent = ManagedObjectID(scope: scopes.scope(of: id), primaryKey: key)
                idMap[id] = permanent
                assignedIDs[position] = permanent
            }
        }
    }

    /// Finds inserts whose unique values are already taken (in the store or earlier in this save)
    /// and applies the merge policy to them. Existing rows are looked up in batches.
    mutating func resolveUniqueness() throws {
        // Constraint groups per root table, and the inserts they apply to.
        var groups: [String: [[String]: [InsertChange]]] = [:]
        for insert in changes.inserts {
            guard let layout = layouts.layout(of: insert.id), !layout.uniquenessConstraints.isEmpty else { continue }
            for group in layout.uniquenessConstraints {
                groups[layout.rootName, default: [:]][group, default: []].append(insert)
            }
        }
        for (root, byGroup) in groups.sorted(by: { $0.key < $1.key }) {
            guard let rootLayout = resolved.entities[root] else { continue }
            for (group, inserts) in byGroup.sorted(by: { $0.key.joined(separator: ",") < $1.key.joined(separator: ",") }) {
                let keys: [[StoredScalar]?] = inserts.map { insert in
                    guard let layout = resolved.entities[insert.id.entityName] else { return nil }
                    return uniquenessKey(group, layout, values: insert.values, toOne: insert.toOne)
                }
                let existing = try existingRows(rootLayout, group: group, keys: keys.compactMap { $0 })
                var claimed: [[StoredScalar]: InsertChange] = [:]
                for (insert, key) in zip(inserts, keys) {
                    guard let key, let layout = resolved.entities[insert.id.entityName] else { continue }
                    let values = uniquenessValues(group, layout, values: insert.values, toOne: insert.toOne)
                    if let earlier = claimed[key] {
                        // Two new objects with the same unique values in one save.
                        try resolveDuplicate(
                            new: insert, existing: resolve(earlier.id), existingRow: nil, earlierInsert: earlier, layout: layout, group: group, values: values)
                        if changes.mergePolicy == .mergeByPropertyObjectTrump || changes.mergePolicy == .overwrite {
                            claimed[key] = insert
                        }
                    } else if let row = existing[key] {
                        try resolveDuplicate(new: insert, existing: row.id, existingRow: row, earlierInsert: nil, layout: layout, group: group, values: values)
                    } else {
                        claimed[key] = insert
                    }
                }
            }
        }
    }

    /// The stored rows holding any of `keys` for a uniqueness group, by key.
    func existingRows(_ rootLayout: EntityLayout, group: [String], keys: [[StoredScalar]]) throws -> [[StoredScalar]: StoreRow] {
        guard !keys.isEmpty else { return [:] }
        let columns = group.map { name in
            rootLayout.selfAndDescendants.lazy.compactMap { entity in
                self.resolved.entities[entity].flatMap { layout in
                    layout.attributeIndex[name].flatMap { layout.attributeColumns[$0] }
                        ?? layout.relationshipIndex[name].flatMap { layout.relationshipColumns[$0] }
                }
            }.first ?? name
        }
        var result: [[StoredScalar]: StoreRow] = [:]
        for row in try db.rows(rootLayout, columns: columns, matching: keys) {
            guard let layout = resolved.entities[row.id.entityName],
                let key = uniquenessKey(group, layout, values: row.values, toOne: row.toOne)
            else { continue }
            result[key] = row
        }
        return result
    }

    /// A uniqueness group's key for an object: each attribute's stored value, each to-one
    /// relationship's destination primary key. Nil when one of them is nil: as in SQL, nil
    /// never collides.
    func uniquenessKey(_ group: [String], _ layout: EntityLayout, values: RowValues, toOne: [ManagedObjectID?]) -> [StoredScalar]? {
        var key: [StoredScalar] = []
        key.reserveCapacity(group.count)
        for name in group {
            if let i = layout.attributeIndex[name], values.indices.contains(i) {
                let value = StoredScalar(values[i])
                if value == .null { return nil }
                key.append(value)
            } else if let i = layout.relationshipIndex[name], let target = toOne[safe: i] ?? nil, let pk = resolve(target).primaryKey {
                key.append(.integer(pk))
            } else {
                return nil
            }
        }
        return key
    }

    /// A uniqueness group's values as the constraint error shows them: attributes as they are,
    /// to-one relationships as the destination's URI.
    func uniquenessValues(_ group: [String], _ layout: EntityLayout, values: RowValues, toOne: [ManagedObjectID?]) -> [AttributeValue] {
        group.map { name in
            if let i = layout.attributeIndex[name] { return values[safe: i] ?? .null }
            if let i = layout.relationshipIndex[name], let target = toOne[safe: i] ?? nil { return .url(resolve(target).uriRepresentation) }
            return .null
        }
    }

    mutating func resolveDuplicate(
        new insert: InsertChange, existing: ManagedObjectID, existingRow: StoreRow?, earlierInsert: InsertChange?, layout: EntityLayout, group: [String],
        values: [AttributeValue]
    ) throws {
        switch changes.mergePolicy {
        case .error:
            throw AmbarError.constraintViolation(entity: layout.name, attributes: group, values: values, existing: existingRow?.id)
        case .mergeByPropertyObjectTrump, .overwrite:
            // The new object's values win: it becomes the existing object, updated.
            if let existingRow {
                idMap[insert.id] = existing
                try overwriteRow(existingRow.id, values: insert.values, toOne: insert.toOne, layout: layout, newVersion: existingRow.version + 1)
                outcome.versions[existing] = existingRow.version + 1
                outcome.updated.insert(existing)
                ledger.record(existing, .update, properties: layout.storedAttributes.map { layout.attributes[$0].name })
                skipInsert.insert(insert.id)
            } else if let earlierInsert {
                // Two new objects in one save: the later one is written, the earlier becomes it.
                skipInsert.insert(earlierInsert.id)
                idMap[earlierInsert.id] = resolve(insert.id)
            }
        case .mergeByPropertyStoreTrump, .rollback:
            // The stored (or first) object wins: the new one becomes it, with its values.
            idMap[insert.id] = existing
            skipInsert.insert(insert.id)
            if let existingRow { outcome.refreshed[existing] = existingRow }
        }
    }

    // MARK: Rows

    mutating func apply(_ delete: DeleteChange) throws {
        guard let layout = resolved.entities[delete.id.entityName], let pk = delete.id.primaryKey else { return }
        // The values the ledger keeps of a deleted object: read as the store holds them, just
        // before the row goes.
        let preserved = layout.attributes.indices.filter { layout.attributes[$0].preservesValueOnDeletion }
        let before = preserved.isEmpty ? nil : try db.currentRow(layout, primaryKey: pk)
        if try !db.deleteRow(root: layout.rootName, primaryKey: pk, expectedVersion: delete.expectedVersion) {
            if let current = try currentRow(delete.id) {
                switch changes.mergePolicy {
                case .error:
                    conflicts.append(conflict(delete.id, layout, cached: delete.expectedVersion, snapshot: .none, current: current))
                    return
                case .rollback:
                    outcome.discardedDeletes.insert(delete.id)
                    outcome.refreshed[delete.id] = current
                    return
                default:
                    _ = try db.deleteRow(root: layout.rootName, primaryKey: pk, expectedVersion: nil)
                }
            }
        }
        deletedInThisSave.insert(delete.id)
        outcome.deleted.insert(delete.id)
        ledger.record(delete.id, .delete)
        if let before {
            var values: [String: AttributeValue] = [:]
            for i in preserved where i < before.values.count { values[layout.attributes[i].name] = before.values[i] }
            ledger.recordTombstone(delete.id, values: values)
        }
    }

    func deleteJoinRows(root: String, pk: Int64) throws {
        for join in resolved.joinTables {
            if join.sourceRoot == root { try db.deleteJoinRows(table: join.table, column: "src", primaryKey: pk) }
            if join.destinationRoot == root { try db.deleteJoinRows(table: join.table, column: "dst", primaryKey: pk) }
        }
    }

    mutating func apply(_ update: UpdateChange) throws {
        guard let layout = resolved.entities[update.id.entityName], let pk = update.id.primaryKey else { return }
        var assignments: [(column: String, value: StoredScalar)] = []
        for i in update.changedAttributes {
            guard let column = layout.attributeColumns[i] else { continue }
            assignments.append((column, StoredScalar(update.values[i])))
        }
        for i in update.changedToOne { assignments += toOneColumns(layout.relationships[i], update.toOne[i]) }
        let changed: Bool
        do {
            changed = try db.updateRow(
                root: layout.rootName, primaryKey: pk, version: update.expectedVersion + 1, assignments: assignments, expectedVersion: update.expectedVersion)
        } catch is ConstraintRefusal {
            throw uniquenessViolation(layout, values: update.values, toOne: update.toOne)
        }
        if changed {
            outcome.versions[update.id] = update.expectedVersion + 1
            outcome.updated.insert(update.id)
            ledger.record(update.id, .update, ledgerProperties: update.ledgerProperties)
            return
        }
        guard let current = try currentRow(update.id) else {
            if changes.mergePolicy == .error {
                conflicts.append(conflict(update.id, layout, cached: update.expectedVersion, snapshot: update.snapshot, current: nil))
            } else {
                outcome.vanished.insert(update.id)
            }
            return
        }
        var merged = current.values
        var mergedToOne = current.toOne.isEmpty ? Array(repeating: nil, count: layout.relationships.count) : current.toOne
        switch changes.mergePolicy {
        case .error:
            conflicts.append(conflict(update.id, layout, cached: update.expectedVersion, snapshot: update.snapshot, current: current))
            return
        case .rollback:
            outcome.refreshed[update.id] = current
            return
        case .overwrite:
            merged = update.values
            mergedToOne = update.toOne
        case .mergeByPropertyObjectTrump:
            for i in update.changedAttributes { merged[i] = update.values[i] }
            for i in update.changedToOne { mergedToOne[i] = update.toOne[i] }
        case .mergeByPropertyStoreTrump:
            for i in update.changedAttributes where update.snapshot.indices.contains(i) && update.snapshot[i] == current.values[i] {
                merged[i] = update.values[i]
            }
            for i in update.changedToOne where update.snapshotToOne.indices.contains(i) && update.snapshotToOne[i] == current.toOne[safe: i] {
                mergedToOne[i] = update.toOne[i]
            }
        }
        let version = current.version + 1
        try overwriteRow(update.id, values: merged, toOne: mergedToOne, layout: layout, newVersion: version)
        outcome.versions[update.id] = version
        outcome.updated.insert(update.id)
        ledger.record(update.id, .update, ledgerProperties: update.ledgerProperties)
        outcome.refreshed[update.id] = StoreRow(id: update.id, version: version, values: merged, toOne: mergedToOne)
    }

    func overwriteRow(_ id: ManagedObjectID, values: RowValues, toOne: [ManagedObjectID?], layout: EntityLayout, newVersion: Int64) throws {
        guard let pk = id.primaryKey else { return }
        var assignments: [(column: String, value: StoredScalar)] = []
        for i in layout.storedAttributes {
            assignments.append((layout.attributeColumns[i] ?? "", StoredScalar(values[i])))
        }
        for rel in layout.relationships where !rel.isToMany && layout.relationshipColumns[rel.index] != nil {
            assignments += toOneColumns(rel, toOne[safe: rel.index] ?? nil)
        }
        do {
            _ = try db.updateRow(root: layout.rootName, primaryKey: pk, version: newVersion, assignments: assignments, expectedVersion: nil)
        } catch is ConstraintRefusal {
            throw uniquenessViolation(layout, values: values, toOne: toOne)
        }
    }

    /// The columns (and values) that store a to-one relationship.
    func toOneColumns(_ rel: ResolvedRelationship, _ target: ManagedObjectID?) -> [(column: String, value: StoredScalar)] {
        guard case .foreignKey(let foreignKey) = rel.mapping else { return [] }
        let destination = target.map(resolve)
        var result: [(column: String, value: StoredScalar)] = [(foreignKey, destination?.primaryKey.map { .integer($0) } ?? .null)]
        if let column = rel.entityColumn {
            result.append((column, destination.flatMap { db.entityIDs[$0.entityName] }.map { .integer($0) } ?? .null))
        }
        return result
    }

    /// Writes the inserts, grouped by entity (one statement shape per entity, one ledger group).
    mutating func applyInserts() throws {
        // The inserts by entity, in the order each entity first appears.
        var groups: [(layout: EntityLayout, inserts: [InsertChange])] = []
        var groupOf: [ObjectIdentifier: Int] = [:]
        var last: (layout: ObjectIdentifier, group: Int)?
        for insert in changes.inserts where skipInsert.isEmpty || !skipInsert.contains(insert.id) {
            guard let layout = layouts.layout(of: insert.id) else { throw AmbarError.unknownEntity(insert.id.entityName) }
            let key = ObjectIdentifier(layout)
            let group: Int
            if let last, last.layout == key {
                group = last.group
            } else if let known = groupOf[key] {
                group = known
            } else {
                group = groups.count
                groups.append((layout, []))
                groupOf[key] = group
            }
            last = (key, group)
            groups[group].inserts.append(insert)
        }
        for (layout, inserts) in groups {
            let entity = layout.name
            var rows: [NewRow] = []
            rows.reserveCapacity(inserts.count)
            outcome.inserted.reserveCapacity(outcome.inserted.count + inserts.count)
            var keys: [Int64] = []
            keys.reserveCapacity(inserts.count)
            for insert in inserts {
                let id = resolve(insert.id)
                guard let pk = id.primaryKey else { continue }
                rows.append(NewRow(primaryKey: pk, values: insert.values, toOne: insert.toOne.map { $0.map(resolve) }))
                outcome.inserted.insert(id)
                keys.append(pk)
            }
            do {
                try db.insertRows(layout, rows)
            } catch let refusal as ConstraintRefusal {
                if insertsOptimistically { throw OptimisticInsertRefused() }
                // Only a row written by another client since the uniqueness check can get here.
                throw uniquenessViolation(layout, values: refusal.values, toOne: refusal.toOne)
            }
            ledger.record(entity: entity, .insert, primaryKeys: keys)
        }
    }

    /// Refuses a save whose new or changed to-one relationships point at rows that no longer
    /// exist (another save deleted them since this context read them): the row would point at
    /// nothing — a dangling reference, as Core Data calls it. The destinations are read (and held
    /// until the save ends) in one query per table; objects inserted by this save need none.
    func checkDestinationsExist() throws {
        var wanted: [String: [Int64: (object: ManagedObjectID, property: String)]] = [:]
        // Apart, so that looking up destinations does not end the runs of the changes' entities.
        var layouts = self.layouts
        var destinations = self.layouts
        func want(_ destination: ManagedObjectID?, from object: ManagedObjectID, _ relationship: ResolvedRelationship) {
            guard let destination, !destination.isTemporaryID, idMap[destination] == nil, let pk = destination.primaryKey,
                let root = destinations.layout(of: destination)?.rootName
            else { return }
            wanted[root, default: [:]][pk] = (object, relationship.name)
        }
        for insert in changes.inserts where skipInsert.isEmpty || !skipInsert.contains(insert.id) {
            guard let layout = layouts.layout(of: insert.id), !layout.relationships.isEmpty else { continue }
            for relationship in layout.relationships where !relationship.isToMany && relationship.index < insert.toOne.count {
                want(insert.toOne[relationship.index], from: insert.id, relationship)
            }
        }
        for update in changes.updates where !update.changedToOne.isEmpty {
            guard let layout = layouts.layout(of: update.id) else { continue }
            for index in update.changedToOne where index < update.toOne.count { want(update.toOne[index], from: update.id, layout.relationships[index]) }
        }
        for (root, byKey) in wanted.sorted(by: { $0.key < $1.key }) {
            let found = try db.existingPrimaryKeys(root: root, Array(byKey.keys))
            for (pk, reference) in byKey.sorted(by: { $0.key < $1.key }) where !found.contains(pk) {
                throw AmbarError.validation(
                    object: reference.object, property: reference.property,
                    reason: "its destination (\(root) \(pk)) was deleted by another save since this context read it (a dangling reference); nothing was written"
                )
            }
        }
    }

    mutating func applyJoins() throws {
        for change in changes.joins {
            let owner = resolve(change.owner)
            let destination = resolve(change.destination)
            if deletedInThisSave.contains(owner) || deletedInThisSave.contains(destination) { continue }
            guard let layout = resolved.entities[owner.entityName],
                let i = layout.relationshipIndex[change.relationship],
                case .joinTable(let table, let own, _) = layout.relationships[i].mapping,
                let ownerPK = owner.primaryKey, let destinationPK = destination.primaryKey
            else { continue }
            let (src, dst) = own == "src" ? (ownerPK, destinationPK) : (destinationPK, ownerPK)
            try db.setJoinRow(table: table, source: src, destination: dst, present: change.isInsert)
        }
    }

    /// Records the positions of ordered relationships: in the destination's order column beside
    /// the inverse's foreign key, or in the join table's order column.
    mutating func applyOrders() throws {
        for change in changes.orders {
            let owner = resolve(change.owner)
            if deletedInThisSave.contains(owner) { continue }
            guard let layout = resolved.entities[owner.entityName], let i = layout.relationshipIndex[change.relationship],
                let column = layout.relationships[i].orderColumn, let ownerPK = owner.primaryKey
            else { continue }
            for (position, id) in change.destinations.enumerated() {
                let destination = resolve(id)
                guard let destinationPK = destination.primaryKey, !deletedInThisSave.contains(destination) else { continue }
                try db.setOrder(layout.relationships[i].mapping, column: column, owner: ownerPK, destination: destinationPK, position: position)
            }
        }
    }

    /// The constraint error for an object whose values collide with a stored row.
    func uniquenessViolation(_ layout: EntityLayout, values: RowValues, toOne: [ManagedObjectID?]) -> AmbarError {
        for group in layout.uniquenessConstraints {
            if let key = uniquenessKey(group, layout, values: values, toOne: toOne),
                // try?: only to name the row held: the violation is reported either way
                let rows = try? existingRows(layout, group: group, keys: [key]),
                let holder = rows.values.first
            {
                return .constraintViolation(
                    entity: layout.name, attributes: group, values: uniquenessValues(group, layout, values: values, toOne: toOne), existing: holder.id)
            }
        }
        return .constraintViolation(entity: layout.name, attributes: layout.uniquenessConstraints.first ?? [], values: [], existing: nil)
    }

    func currentRow(_ id: ManagedObjectID) throws -> StoreRow? {
        guard let layout = resolved.entities[id.entityName], let pk = id.primaryKey else { return nil }
        return try db.currentRow(layout, primaryKey: pk)
    }

    func conflict(_ id: ManagedObjectID, _ layout: EntityLayout, cached: Int64, snapshot: RowValues, current: StoreRow?) -> MergeConflict {
        func named(_ values: RowValues) -> [String: AttributeValue] {
            var result: [String: AttributeValue] = [:]
            for (i, a) in layout.attributes.enumerated() where i < values.count { result[a.name] = values[i] }
            return result
        }
        return MergeConflict(
            objectID: id, cachedVersion: cached, currentVersion: current?.version ?? 0,
            cachedSnapshot: named(snapshot), persistedSnapshot: current.map { named($0.values) } ?? [:])
    }
}
