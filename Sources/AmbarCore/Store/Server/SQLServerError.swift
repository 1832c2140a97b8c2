import Foundation

/// Why a statement failed.
package struct SQLServerError: Error, Sendable, CustomStringConvertible {
    /// The server's SQLSTATE code, when the server answered (`23505`: unique violation).
    package var sqlState: String?
    /// The server's message, or what went wrong with the connection. Never holds credentials.
    package var message: String
    /// The connection is gone (closed, reset, timed out, or the server answered nonsense): the
    /// statement may or may not have run, and the connection cannot be used again.
    package var connectionLost: Bool
    /// The driver's error this one reports (postgres-nio's, NIO's), kept for ``AmbarError``'s
    /// cause.
    package var underlying: (any Error)?

    package init(sqlState: String? = nil, message: String, connectionLost: Bool = false, underlying: (any Error)? = nil) {
        self.sqlState = sqlState
        self.message = message
        self.connectionLost = connectionLost
        self.underlying = underlying
    }

    package var description: String {
        sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message
    }

    /// A unique or primary-key violation.
    package var isUniqueViolation: Bool { sqlState == "23505" }
}
