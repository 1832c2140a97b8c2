import AmbarCore
import AmbarSQL
import Foundation
import Logging
import Synchronization

/// A connection that counts the statements that succeeded on it.
private final class CountingConnection: SQLServerConnection, @unchecked Sendable {
    let base: any SQLServerConnection
    /// Written and read by the one caller using the connection.
    var statements = 0

    init(_ base: any SQLServerConnection) { self.base = base }

    func query(_ sql: String, _ parameters: [SQLServerValue]) throws(SQLServerError) -> SQLServerResult {
        let result = try base.query(sql, parameters)
        statements += 1
        return result
    }

    func queryRecurring(_ sql: String, _ parameters: [SQLServerValue]) throws(SQLServerError) -> [[SQLServerValue]] {
        let rows = try base.queryRecurring(sql, parameters)
        statements += 1
        return rows
    }

    var isUsable: Bool { base.isUsable }
    func close() { base.close() }
}

/// The connections of a server store: idle ones kept for reuse, a new one opened when none is
/// idle. A connection found dead (the server restarted, a link was cut) is dropped, and a
/// statement that failed on a stale idle connection before doing anything is retried once on a
/// new one.
final class ServerConnectionPool: Sendable {
    let connector: any SQLServerConnector
    /// A statement run once on each new connection before it is used (session settings).
    let sessionSetup: String?
    private let idle = Locked<[any SQLServerConnection]>([])
    private let isClosed = Atomic<Bool>(false)
    private let statements = Atomic<Int>(0)
    /// Idle connections kept at most; more are closed when returned.
    static let idleLimit = 8

    init(connector: any SQLServerConnector, sessionSetup: String? = nil) {
        self.connector = connector
        self.sessionSetup = sessionSetup
    }

    var location: String { connector.displayLocation }

    /// How many statements the store's work sent through this pool (each one a round trip to
    /// the server), session setups left out.
    var statementsSent: Int { statements.load(ordering: .relaxed) }

    /// Runs `body` on a connection of its own. When a connection that sat idle turns out dead at
    /// `body`'s first statement (nothing ran), `body` runs again on a new connection.
    func withConnection<T>(_ operation: String, _ body: (any SQLServerConnection) throws -> T) throws(AmbarError) -> T {
        guard !isClosed.load(ordering: .acquiring) else { throw .storeDeleted }
        do {
            let idleConnection = idle.withLock { $0.popLast() }
            if let idleConnection, idleConnection.isUsable {
                let counted = CountingConnection(idleConnection)
                defer { statements.add(counted.statements, ordering: .relaxed) }
                do {
                    let result = try body(counted)
                    giveBack(idleConnection)
                    return result
                } catch let error as SQLServerError where error.connectionLost && counted.statements == 0 {
                    idleConnection.close()
                } catch {
                    giveBack(idleConnection)
                    throw error
                }
            } else {
                idleConnection?.close()
            }
            let connection = try connector.connect()
            defer { giveBack(connection) }
            if let sessionSetup { _ = try connection.query(sessionSetup, []) }
            let counted = CountingConnection(connection)
            defer { statements.add(counted.statements, ordering: .relaxed) }
            return try body(counted)
        } catch {
            throw Self.map(error, operation: operation, location: location)
        }
    }

    private func giveBack(_ connection: any SQLServerConnection) {
        guard connection.isUsable, !isClosed.load(ordering: .acquiring) else {
            connection.close()
            return
        }
        let kept = idle.withLock { list -> Bool in
            guard list.count < Self.idleLimit else { return false }
            list.append(connection)
            return true
        }
        if !kept { connection.close() }
    }

    deinit {
        for connection in idle.withLock({ $0 }) { connection.close() }
    }

    /// Closes every idle connection; connections in use close when they are returned.
    func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for connection in idle.withLock({ list in
            defer { list.removeAll() }
            return list
        }) { connection.close() }
    }

    /// An error of a statement as the store reports it.
    static func map(_ error: any Error, operation: String, location: String) -> AmbarError {
        if let error = error as? AmbarError { return error }
        if let error = error as? SQLServerError {
            if error.connectionLost {
                return .serverUnavailable(server: location, operation: operation, reason: error.message, cause: ErrorCause(error.underlying ?? error))
            }
            return .storage(operation: operation, code: 0, message: "PostgreSQL at \(location): \(error)", cause: ErrorCause(error.underlying ?? error))
        }
        return .storage(operation: operation, code: 0, message: "\(error)", cause: ErrorCause(error))
    }
}
