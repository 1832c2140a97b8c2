import AmbarCore
import Foundation

/// What a save needs from a backend, inside one open write transaction: rows read and written by
/// primary key, keys allocated, join and order rows, the ledger and receipts.
///
/// ``SaveWork`` holds the rules (key assignment, uniqueness, optimistic locking, the five merge
/// policies, the ledger record) once, for every backend; a backend only runs statements.
package protocol SaveTransaction {
    /// The store the transaction writes.
    var storeIdentifier: String { get }
    /// The entity numbers stored in `Z_ENT` and entity columns.
    var entityIDs: [String: Int64] { get }

    /// The token recorded with idempotency key `key`, if a save used it.
    func receiptToken(_ key: String) throws -> Int64?
    /// Reserves `count` primary keys in `root` (not necessarily consecutive).
    func allocate(root: String, count: Int) throws -> [Int64]
    /// The rows of `rootLayout`'s table whose `columns` hold one of `keys` (one value per column).
    func rows(_ rootLayout: EntityLayout, columns: [String], matching keys: [[StoredScalar]]) throws -> [StoreRow]
    /// The stored row of an object, or `nil` when it is gone.
    func currentRow(_ layout: EntityLayout, primaryKey: Int64) throws -> StoreRow?
    /// Which of `primaryKeys` have a row in `root`'s table, held so that no other transaction
    /// deletes them before this one ends.
    func existingPrimaryKeys(root: String, _ primaryKeys: [Int64]) throws -> Set<Int64>
    /// Deletes a row (only at `expectedVersion` when given); returns whether a row was deleted.
    func deleteRow(root: String, primaryKey: Int64, expectedVersion: Int64?) throws -> Bool
    /// Deletes the join rows whose `column` (`src` or `dst`) is `primaryKey`.
    func deleteJoinRows(table: String, column: String, primaryKey: Int64) throws
    /// Sets `assignments` and the version on a row (only at `expectedVersion` when given); returns
    /// whether a row was changed. A uniqueness refusal throws ``ConstraintRefusal``.
    func updateRow(root: String, primaryKey: Int64, version: Int64, assignments: [(column: String, value: StoredScalar)], expectedVersion: Int64?) throws
        -> Bool
    /// Inserts new rows of `layout` at version 1, to-one destinations already resolved. A
    /// uniqueness refusal throws ``ConstraintRefusal`` naming the row.
    func insertRows(_ layout: EntityLayout, _ rows: [NewRow]) throws
    /// The join rows of `table` whose `ownColumn` (`src` or `dst`) is one of `owners`, oriented
    /// from the owner's side.
    func joinRows(table: String, ownColumn: String, otherColumn: String, owners: [Int64]) throws -> [JoinPair]
    /// Adds (ignoring one that exists) or removes a join row.
    func setJoinRow(table: String, source: Int64, destination: Int64, present: Bool) throws
    /// Records a destination's position in an ordered relationship.
    func setOrder(_ mapping: RelationshipMapping, column: String, owner: Int64, destination: Int64, position: Int) throws
    /// Appends `entry` to the ledger; returns its token (`nil` when the entry is empty). Also the
    /// save's model check: throws ``AmbarError/storeMigrated(storeHash:modelHash:)`` when another
    /// process migrated the store since this one opened it (the transaction then rolls back).
    func writeLedger(_ entry: LedgerEntry) throws -> Int64?
    /// Records that the save with idempotency key `key` committed as `token`.
    func writeReceipt(_ key: String, token: Int64) throws
    /// Moves a durable consumer's position, only from where `move` expects it; otherwise throws
    /// ``AmbarError/consumerPositionMoved(consumer:expected:found:)`` (the save rolls back).
    func moveConsumer(_ move: ConsumerMove) throws
    /// Writes `move`'s outbox messages (after its position moved), each with its key; a key
    /// already in the outbox throws (the save rolls back).
    func writeOutbox(_ move: ConsumerMove) throws

    /// From how many inserts into tables with uniqueness constraints on it pays to insert first
    /// and look for the holders of taken values only when the store refuses a row (see
    /// ``SaveWork/perform(model:transaction:changes:)``), rather than look them up first.
    var optimisticInsertMinimum: Int { get }
    /// Runs one savepoint statement (the same SQL on every backend).
    func execute(_ step: SavepointStep) throws
}

/// The statements of the savepoint around ``SaveWork``'s optimistic attempt.
package enum SavepointStep: String {
    case begin = "SAVEPOINT ambar_save_attempt"
    case release = "RELEASE SAVEPOINT ambar_save_attempt"
    case rollBack = "ROLLBACK TO SAVEPOINT ambar_save_attempt"
}

/// A row to insert, with its to-one destinations resolved to permanent IDs.
package struct NewRow {
    package let primaryKey: Int64
    package let values: RowValues
    /// By relationship index; only stored to-ones are read.
    package let toOne: [ManagedObjectID?]

    /// A value with every stored property given.
    package init(primaryKey: Int64, values: RowValues, toOne: [ManagedObjectID?]) {
        self.primaryKey = primaryKey
        self.values = values
        self.toOne = toOne
    }
}

/// A backend's report that a uniqueness constraint refused a row: for an insert, `values` are the
/// row's attribute values (in layout order), from which the save names the constraint and its
/// holder; an update reports none (the save knows them).
package struct ConstraintRefusal: Error {
    var values: RowValues = .none
    var toOne: [ManagedObjectID?] = []

    /// Made from its parts, by the modules that read and write stores.
    package init(values: RowValues = .none, toOne: [ManagedObjectID?] = []) {
        self.values = values
        self.toOne = toOne
    }
}

/// An insert refused under ``SaveWork``'s optimistic attempt: the save starts over, looking up
/// the holders of unique values first.
struct OptimisticInsertRefused: Error {}
