import Foundation

/// One connection to a database server, used by one caller at a time; statements run
/// synchronously on the caller's thread.
package protocol SQLServerConnection: AnyObject, Sendable {
    /// Runs one statement with positional parameters (`$1`, `$2`, …).
    func query(_ sql: String, _ parameters: [SQLServerValue]) throws(SQLServerError) -> SQLServerResult
    /// Runs a statement of a shape the store sends again and again (a save's insert, the ledger's
    /// statement), and returns its rows: a server that can keeps it parsed and planned for the
    /// connection's life, under a name of its own, and later calls send only the values.
    ///
    /// Only for statements whose rows say what they did: the count of rows written is not
    /// returned.
    func queryRecurring(_ sql: String, _ parameters: [SQLServerValue]) throws(SQLServerError) -> [[SQLServerValue]]
    /// Whether the connection can still be used (false once it was lost or closed).
    var isUsable: Bool { get }
    /// Closes the connection.
    func close()
}

extension SQLServerConnection {
    /// Runs the statement as any other (a connection that does not prepare statements).
    package func queryRecurring(_ sql: String, _ parameters: [SQLServerValue]) throws(SQLServerError) -> [[SQLServerValue]] {
        try query(sql, parameters).rows
    }
}

/// Opens connections to one database on a server.
package protocol SQLServerConnector: Sendable {
    /// The server and database, for logs, `status` and errors: never the password.
    var displayLocation: String { get }
    /// Opens a new connection.
    func connect() throws(SQLServerError) -> any SQLServerConnection
    /// Writes a consistent snapshot of the whole database to the new file `file` with the
    /// server's own tool (`pg_dump`), and checks it can be read back.
    func dump(to file: URL) throws(AmbarError)
    /// Opens the store in this database for `model`, creating its tables on first open (the
    /// backend module's store).
    func openStore(model: ManagedObjectModel) throws(AmbarError) -> any PersistentStore
    /// The model the store in this database was created with.
    func storedModel() throws(AmbarError) -> ManagedObjectModel
}
