import Foundation

/// A value sent to or read from a database server.
package enum SQLServerValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    /// An exact decimal, as its text (PostgreSQL `numeric`).
    case numeric(String)
    case boolean(Bool)
    case integerArray([Int64])
    case textArray([String])
}

/// The rows a statement returned and how many rows it changed.
package struct SQLServerResult: Sendable {
    /// The rows, each the values of its columns in order.
    package var rows: [[SQLServerValue]]
    /// The rows inserted, updated or deleted (0 for other statements).
    package var affectedRows: Int

    package init(rows: [[SQLServerValue]], affectedRows: Int) {
        self.rows = rows
        self.affectedRows = affectedRows
    }
}

/// Why a statement failed.
package struct SQLServerError: Error, Sendable, CustomStringConvertible {
    /// The server's SQLSTATE code, when the server answered (`23505`: unique violation).
    package var sqlState: String?
    /// The server's message, or what went wrong with the connection. Never holds credentials.
    package var message: String
    /// The connection is gone (closed, reset, timed out, or the server answered nonsense): the
    /// statement may or may not have run, and the connection cannot be used again.
    package var connectionLost: Bool

    package init(sqlState: String? = nil, message: String, connectionLost: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.connectionLost = connectionLost
    }

    package var description: String {
        sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message
    }

    /// A unique or primary-key violation.
    package var isUniqueViolation: Bool { sqlState == "23505" }
}

/// One connection to a database server, used by one caller at a time; statements run
/// synchronously on the caller's thread.
package protocol SQLServerConnection: AnyObject, Sendable {
    /// Runs one statement with positional parameters (`$1`, `$2`, …).
    func query(_ sql: String, _ parameters: [SQLServerValue]) throws(SQLServerError) -> SQLServerResult
    /// Whether the connection can still be used (false once it was lost or closed).
    var isUsable: Bool { get }
    /// Closes the connection.
    func close()
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
}

/// What a listening connection reports.
package enum ServerListenEvent: Sendable {
    /// `LISTEN` is in place (first time or after a reconnection): notifications from now on
    /// arrive; anything committed before must be read from the ledger.
    case listening
    /// A notification's payload.
    case notification(String)
    /// The listening connection was lost (or could not be made); it reconnects with backoff.
    case lost(reason: String)
}

/// A listening connection; reconnects by itself until stopped.
package protocol ServerListening: Sendable {
    /// Whether `LISTEN` is in place right now.
    var isListening: Bool { get }
    /// Stops listening and closes the connection.
    func stop() async
}

/// A connector that can also listen for notifications.
package protocol SQLServerListenConnector: SQLServerConnector {
    /// Listens on `channel` on a connection of its own, reporting to `onEvent` (from any thread),
    /// reconnecting with backoff after a loss, until stopped.
    func listen(channel: String, onEvent: @escaping @Sendable (ServerListenEvent) -> Void) -> any ServerListening
}
