import AmbarCore
import AmbarSQL
import Foundation
import GRDB
import GRDBSQLite
import Logging

/// The SQLite backend: a WAL-mode `DatabasePool` for files (one writer, concurrent readers) or a
/// `DatabaseQueue` in memory. Write transactions are IMMEDIATE with a busy timeout, so several
/// processes can share the file without surprise `SQLITE_BUSY` errors.
package final class SQLiteStore: PersistentStore {
    /// Where to open a store.
    package enum Location: Sendable {
        case file(URL)
        case inMemory
    }

    package let identifier: String
    package let model: ManagedObjectModel
    package let location: String
    let writer: any DatabaseWriter
    let entityIDs: [String: Int64]
    let entityNames: [Int64: String]
    /// The interned scope of each entity's object IDs in this store.
    let scopes: StoreScopes
    /// The scope of each entity's IDs by the entity's number.
    let entityScopes: [Int64: Unmanaged<ObjectIDScope>]
    /// How to read a row of each root table.
    let rowSpecs: [String: RowSpec]
    /// The store file opened (nil in memory): a write finds whether the file at the path is
    /// still this one.
    let fileIdentity: FileIdentity?
    /// Primary keys reserved ahead of the saves that use them.
    let keyReserve = SQLiteKeyReserve()
    /// The connection of its own that ledger followers read on; nil for a store in memory.
    let ledgerReader: SQLiteLedgerReader?
    static let logger = Logger(label: "ambar.stack.sqlite")

    /// The INSERT statement of one entity, built once.
    struct InsertPlan: Sendable {
        let sql: String
        let entityID: Int64
        let toOne: [ResolvedRelationship]
    }

    let insertPlans: [String: InsertPlan]

    init(writer: any DatabaseWriter, location: String, model: ManagedObjectModel, uuid: String, entityIDs: [String: Int64]) throws(AmbarError) {
        self.writer = writer
        self.location = location
        self.model = model
        self.identifier = uuid
        self.fileIdentity = FileIdentity(path: location)
        self.ledgerReader = (writer as? DatabasePool).map { SQLiteLedgerReader(path: $0.path, busyTimeout: 10) }
        self.entityIDs = entityIDs
        var names: [Int64: String] = [:]
        for (name, id) in entityIDs { names[id] = name }
        self.entityNames = names
        let resolved = model.resolved
        let scopes = StoreScopes(storeIdentifier: uuid, entityNames: entityIDs.keys)
        self.scopes = scopes
        self.entityScopes = entityIDs.reduce(into: [:]) { $0[$1.value] = scopes.scope($1.key) }
        self.rowSpecs = try RowSpec.specs(for: resolved, entityIDs: entityIDs, scopes: scopes, location: location)
        var plans: [String: InsertPlan] = [:]
        for (name, layout) in resolved.entities {
            guard let entityID = entityIDs[name] else { continue }
            let toOne = layout.relationships.filter { !$0.isToMany && layout.relationshipColumns[$0.index] != nil }
            var columns = ["Z_PK", "Z_ENT", "Z_OPT"] + layout.storedAttributes.map { quoted(layout.attributeColumns[$0] ?? "") }
            for rel in toOne {
                columns.append(quoted(layout.column(ofRelationship: rel.index)))
                if let column = rel.entityColumn { columns.append(quoted(column)) }
            }
            let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            plans[name] = InsertPlan(
                sql: "INSERT INTO \(quoted(layout.rootName)) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))",
                entityID: entityID, toOne: toOne)
        }
        self.insertPlans = plans
    }

    /// Throws ``AmbarError/storeReplaced(path:)`` when the file at the store's path is no longer
    /// the one this store opened (replaced or removed).
    package func verifyIdentity() throws(AmbarError) {
        guard let fileIdentity, FileIdentity(path: location) != fileIdentity else { return }
        throw .storeReplaced(path: location)
    }

    package func close() {
        ledgerReader?.close()
        do {
            if let pool = writer as? DatabasePool { try pool.close() }
            if let queue = writer as? DatabaseQueue { try queue.close() }
        } catch {
            Self.logger.warning("Closing the store at \(location) failed: \(error)")
        }
    }
}
