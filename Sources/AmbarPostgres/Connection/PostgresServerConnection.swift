import AmbarCore
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// One postgres-nio connection, used synchronously: each statement is sent on the connection's
/// event loop and the caller's thread waits for the answer (never longer than the URL's
/// `statement_timeout`; then the connection is closed and counts as lost).
///
/// The connections run on an event-loop group of their own (one thread, for every connection
/// of the process), not NIO's shared one: a statement's caller waits on its own thread, and a
/// caller that is itself on a shared loop (a NIO handler of the program that reads the store)
/// must not block the loop that would answer it.
final class PostgresServerConnection: SQLServerConnection, Sendable {
    /// The group every PostgreSQL connection of the process runs on.
    static let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    static let logger = Logger(label: "ambar.postgres")

    let connection: PostgresConnection
    let location: String
    let statementTimeout: TimeInterval
    private let lost = Atomic<Bool>(false)
    /// The statements prepared on this connection (``queryRecurring(_:_:)``).
    private let shapes = Mutex(PreparedShapes())
    /// Where the tasks of prepared statements run: the connection's own loop.
    private let executor: EventLoopTaskExecutor

    private init(connection: PostgresConnection, location: String, statementTimeout: TimeInterval) {
        self.connection = connection
        self.location = location
        self.statementTimeout = statementTimeout
        self.executor = EventLoopTaskExecutor(loop: connection.eventLoop)
    }

    /// Opens a connection for `url`.
    /// The server shows the URL's `application_name` ("ambar" by default) in
    /// `pg_stat_activity.application_name`, with "-listen" appended for a doorbell's connection.
    static func connect(_ url: PostgresURL, listening: Bool = false) throws(SQLServerError) -> PostgresServerConnection {
        let configuration = try configuration(url, listening: listening)
        let future = PostgresConnection.connect(on: eventLoopGroup.next(), configuration: configuration, id: nextID(), logger: logger)
        let connection = try wait(future, timeout: url.connectTimeout + 1, location: url.description) {}
        return PostgresServerConnection(connection: connection, location: url.description, statementTimeout: url.statementTimeout)
    }

    /// ``connect(_:listening:)`` for a task: waiting for the server does not hold a thread, and
    /// cancelling the task stops the wait at once (a connection that completes later is closed).
    static func connectCancellably(_ url: PostgresURL, listening: Bool = false) async throws -> PostgresServerConnection {
        let configuration = try configuration(url, listening: listening)
        let future: EventLoopFuture<PostgresConnection> = PostgresConnection.connect(
            on: eventLoopGroup.next(), configuration: configuration, id: nextID(), logger: logger)
        let waiting = CancellableWait<PostgresConnection>()
        future.whenComplete { result in
            // Too late for a waiter that gave up: the connection is closed, not leaked.
            if !waiting.finish(result.mapError { $0 }), case .success(let connection) = result { let _: EventLoopFuture<Void> = connection.close() }
        }
        do {
            let connection = try await withThrowingTaskGroup(of: Void.self) { group in
                // The deadline, a child task: cancelled once the wait ended (then nothing is
                // reported), and awaited before this returns.
                group.addTask {
                    do { try await Task.sleep(for: .seconds(url.connectTimeout + 1)) } catch { return }
                    let silence = SQLServerError(message: "no answer within \(Int(url.connectTimeout)) s (connect_timeout)", connectionLost: true)
                    _ = waiting.finish(.failure(silence))
                }
                defer { group.cancelAll() }
                return try await waiting.value()
            }
            return PostgresServerConnection(connection: connection, location: url.description, statementTimeout: url.statementTimeout)
        } catch let error as SQLServerError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw map(error, location: url.description)
        }
    }

    /// postgres-nio's settings for `url`: the socket or host, TLS, the connect timeout, the
    /// `application_name`, and READ COMMITTED as the session's default isolation (sent in the
    /// startup packet: no round trip), which the store's statements outside an explicit
    /// transaction rely on whatever the server's or the role's `default_transaction_isolation`.
    private static func configuration(_ url: PostgresURL, listening: Bool) throws(SQLServerError) -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let directory = url.socketDirectory {
            configuration = .init(unixSocketPath: "\(directory)/.s.PGSQL.\(url.port)", username: url.user, password: url.password, database: url.database)
        } else {
            configuration = .init(host: url.host, port: url.port, username: url.user, password: url.password, database: url.database, tls: try tls(url))
        }
        configuration.options.connectTimeout = .milliseconds(Int64(url.connectTimeout * 1000))
        configuration.options.additionalStartupParameters = [
            ("application_name", (url.applicationName ?? "ambar") + (listening ? "-listen" : "")),
            ("default_transaction_isolation", "read committed"),
            // Milliseconds: a session idle inside a transaction (a frozen process) loses it.
            ("idle_in_transaction_session_timeout", String(Int64((url.idleInTransactionTimeout * 1000).rounded()))),
        ]
        return configuration
    }

    private static let ids = Atomic<Int>(0)
    private static func nextID() -> Int { ids.add(1, ordering: .relaxed).newValue }

    private static func tls(_ url: PostgresURL) throws(SQLServerError) -> PostgresConnection.Configuration.TLS {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch url.tls {
        case .disable: return .disable
        case .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let path = url.rootCertificatePath { tls.trustRoots = .file(path) }
        do {
            let context = try NIOSSLContext(configuration: tls)
            return url.tls == .prefer ? .prefer(context) : .require(context)
        } catch {
            throw SQLServerError(message: "cannot set up TLS for \(url): \(error)", connectionLost: true, underlying: error)
        }
    }

    var isUsable: Bool { !lost.load(ordering: .acquiring) && !connection.isClosed }

    /// Closes the connection and waits (briefly) until it is closed.
    func close() {
        lost.store(true, ordering: .releasing)
        guard !connection.isClosed else { return }
        let closed: EventLoopFuture<Void> = connection.close()
        guard !connection.eventLoop.inEventLoop else { return }
        let done = DispatchSemaphore(value: 0)
        closed.whenComplete { _ in done.signal() }
        _ = done.wait(timeout: .now() + 2)
    }

    deinit {
        close()
    }

    func query(_ sql: String, _ parameters: [SQLServerValue]) throws(SQLServerError) -> SQLServerResult {
        guard isUsable else { throw SQLServerError(message: "the connection to \(location) was lost", connectionLost: true) }
        let future = connection.query(PostgresQuery(unsafeSQL: sql, binds: Self.bindings(parameters)), logger: Self.logger)
        let result = try Self.wait(future, timeout: statementTimeout, location: location) { self.close() }
        var rows: [[SQLServerValue]] = []
        rows.reserveCapacity(result.rows.count)
        for row in result.rows {
            rows.append(try decode(row))
        }
        return SQLServerResult(rows: rows, affectedRows: result.metadata.rows ?? 0)
    }

    /// Runs the statement as a prepared statement of this connection (``RecurringStatement``):
    /// the first call of a text and set of parameter types parses and plans it under a name of
    /// its own (one round trip more), later calls send only the values. Past
    /// ``PreparedShapes/limit`` shapes it runs unnamed, as ``query(_:_:)`` does.
    func queryRecurring(_ sql: String, _ parameters: [SQLServerValue]) throws(SQLServerError) -> [[SQLServerValue]] {
        guard isUsable else { throw SQLServerError(message: "the connection to \(location) was lost", connectionLost: true) }
        let key = PreparedShapes.Key(sql: sql, parameters: parameters)
        guard let name = shapes.withLock({ $0.name(for: key) }) else { return try query(sql, parameters).rows }
        let statement = RecurringStatement(bindings: Self.bindings(parameters))
        let shape = RecurringStatement.Shape(name: name, sql: sql)
        let promise = connection.eventLoop.makePromise(of: [[SQLServerValue]].self)
        Task(executorPreference: executor) { [connection] in
            do {
                let rows = try await RecurringStatement.$shape.withValue(shape) {
                    var rows: [[SQLServerValue]] = []
                    for try await row in try await connection.execute(statement, logger: Self.logger) {
                        rows.append(try self.decode(row))
                    }
                    return rows
                }
                promise.succeed(rows)
            } catch {
                promise.fail(error)
            }
        }
        do {
            let rows = try Self.wait(promise.futureResult, timeout: statementTimeout, location: location) { self.close() }
            shapes.withLock { $0.ran(key) }
            return rows
        } catch {
            shapes.withLock { $0.failed(key, state: error.sqlState) }
            throw error
        }
    }

    /// postgres-nio's bindings of `parameters`.
    private static func bindings(_ parameters: [SQLServerValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: parameters.count)
        for parameter in parameters {
            switch parameter {
            case .null: bindings.appendNull()
            case .integer(let v): bindings.append(v)
            case .real(let d): bindings.append(d)
            case .text(let s), .numeric(let s): bindings.append(s)
            case .blob(let d): bindings.append(ByteBuffer(bytes: d))
            case .boolean(let b): bindings.append(b)
            case .integerArray(let a): bindings.append(a)
            case .textArray(let a): bindings.append(a)
            case .column(let column): bindings.append(PostgresColumnArray(column))
            }
        }
        return bindings
    }

    private func decode(_ row: PostgresRow) throws(SQLServerError) -> [SQLServerValue] {
        var cells: [SQLServerValue] = []
        for cell in row {
            cells.append(try decode(cell))
        }
        return cells
    }

    private func decode(_ cell: PostgresCell) throws(SQLServerError) -> SQLServerValue {
        guard cell.bytes != nil else { return .null }
        do {
            switch cell.dataType {
            case .int2, .int4, .int8, .oid: return .integer(try cell.decode(Int64.self))
            case .float4, .float8: return .real(try cell.decode(Double.self))
            case .numeric: return .numeric(try cell.decode(Decimal.self).description)
            case .bool: return .boolean(try cell.decode(Bool.self))
            case .bytea: return .blob(try cell.decode(Data.self))
            case .int8Array: return .integerArray(try cell.decode([Int64].self))
            case .textArray: return .textArray(try cell.decode([String].self))
            default: return .text(try cell.decode(String.self))
            }
        } catch {
            // The server sent something its type does not allow: not a PostgreSQL answer.
            close()
            throw SQLServerError(
                message: "the server sent a value of type \(cell.dataType) in column \(cell.columnName) that cannot be read", connectionLost: true)
        }
    }

    /// Waits for `future` without blocking an event loop of this group; after `timeout`, calls
    /// `onTimeout` (which closes the connection) and reports the server as unreachable.
    private static func wait<T: Sendable>(_ future: EventLoopFuture<T>, timeout: TimeInterval, location: String, onTimeout: () -> Void) throws(SQLServerError)
        -> T
    {
        let box = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        future.whenComplete { result in
            box.withLock { $0 = result }
            done.signal()
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            onTimeout()
            throw SQLServerError(message: "no answer within \(Int(timeout)) s (statement_timeout)", connectionLost: true)
        }
        switch box.withLock({ $0 }) {
        case .success(let value)?: return value
        case .failure(let error as SQLServerError)?: throw error
        case .failure(let error)?: throw map(error, location: location)
        case nil: throw SQLServerError(message: "no answer", connectionLost: true)
        }
    }

    /// A postgres-nio error as the store reports it: the server's SQLSTATE and message when it
    /// answered, else a lost connection with what happened (never the password).
    static func map(_ error: any Error, location: String) -> SQLServerError {
        guard let error = error as? PSQLError else {
            return SQLServerError(message: "cannot reach it: \(error)", connectionLost: true, underlying: error)
        }
        if let info = error.serverInfo, let state = info[.sqlState] {
            let message = [info[.message], info[.detail], info[.hint]].compactMap { $0 }.joined(separator: " — ")
            // 28xxx: the credentials were refused; 57P01–57P03: the server is shutting down or
            // starting; 25P03: the server ended a session that sat idle inside a transaction (this
            // process was frozen or cut off past idle_in_transaction_timeout).
            let refused = state.hasPrefix("28") || state.hasPrefix("57P") || state.hasPrefix("08")
            let ended = state == "25P03"
            return SQLServerError(
                sqlState: state,
                message: refused ? "the server refused the connection: \(message)" : ended ? "the server ended the session: \(message)" : message,
                connectionLost: refused || ended, underlying: error)
        }
        let what: String
        switch error.code {
        case .serverClosedConnection, .uncleanShutdown: what = "the server closed the connection"
        case .connectionError: what = "cannot connect (\(Self.connectionProblem(error.underlying)))"
        case .messageDecodingFailure, .unexpectedBackendMessage, .invalidCommandTag: what = "the server answered something that is not the PostgreSQL protocol"
        case .sslUnsupported: what = "the server does not offer TLS, which sslmode requires"
        case .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError: what = "authentication failed (\(error.code)); check the user and password"
        case .failedToAddSSLHandler, .receivedUnencryptedDataAfterSSLRequest: what = "TLS failed (\(error.code))"
        default: what = "\(error.code)"
        }
        return SQLServerError(message: what, connectionLost: true, underlying: error)
    }

    /// The system's words for a failed connection (`Connection refused`), without NIO's wrapping;
    /// TLS failures say so.
    private static func connectionProblem(_ error: (any Error)?) -> String {
        guard let error else { return "connection failed" }
        let text = "\(error)"
        if text.contains("failedToValidateHostname") {
            return "TLS: the server's certificate does not name this host (sslmode=verify-full; verify-ca checks only who signed it)"
        }
        if text.contains("NIOSSL") || text.contains("handshakeFailed") {
            return "TLS failed: \(text)"
        }
        for known in ["Connection refused", "No route to host", "Network is unreachable", "Connection timed out", "timed out", "No such file or directory"]
        where text.contains(known) {
            return known
        }
        return text
    }
}

/// Opens postgres-nio connections for a URL.
struct PostgresConnector: SQLServerConnector {
    let url: PostgresURL

    var displayLocation: String { url.description }

    func connect() throws(SQLServerError) -> any SQLServerConnection {
        try PostgresServerConnection.connect(url)
    }
}

/// A connector for a URL that could not be read: every connection attempt says why.
struct UnreadableURLConnector: SQLServerConnector {
    let displayLocation: String
    let problem: String

    func connect() throws(SQLServerError) -> any SQLServerConnection {
        throw SQLServerError(message: problem, connectionLost: true)
    }
}
