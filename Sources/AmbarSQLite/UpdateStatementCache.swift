import AmbarCore
import AmbarSQL
import GRDB

/// The UPDATE statement a save used last, by table and assigned columns.
///
/// The updates of one save usually write the same columns of the same table, so the statement's
/// SQL is built and looked up in GRDB's cache once per change of shape, not once per row: per row
/// that was two thirds of the time spent outside SQLite in a 10,000-object update.
/// Lives for one save transaction, on its connection's queue.
final class UpdateStatementCache {
    private var root = ""
    private var columns: [String] = []
    private var checksVersion = false
    private var cached: Statement?

    /// The statement `UPDATE root SET Z_OPT = ?, columns… = ? WHERE Z_PK = ?` (`AND Z_OPT = ?`
    /// when `checksVersion`), prepared on `db`.
    func statement(
        _ db: Database, root: String, assignments: [(column: String, value: StoredScalar)], checksVersion: Bool
    ) throws -> Statement {
        if let cached, checksVersion == self.checksVersion, root == self.root, assignments.count == columns.count,
            zip(assignments, columns).allSatisfy({ $0.column == $1 })
        {
            return cached
        }
        var sql = "UPDATE \(quoted(root)) SET Z_OPT = ?"
        for (column, _) in assignments { sql += ", \(quoted(column)) = ?" }
        sql += checksVersion ? " WHERE Z_PK = ? AND Z_OPT = ?" : " WHERE Z_PK = ?"
        let made = try db.cachedStatement(sql: sql)
        self.root = root
        self.columns = assignments.map { $0.column }
        self.checksVersion = checksVersion
        self.cached = made
        return made
    }
}
