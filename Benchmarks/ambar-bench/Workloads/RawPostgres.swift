import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The PostgreSQL baselines' client: postgres-nio used directly, each statement sent and waited
/// for (`EventLoopFuture.wait()`) — what a program without AmbarStack would write.
final class RawPostgres {
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    static let logger = Logger(label: "ambar.bench.postgres")
    let connection: PostgresConnection

    /// Connects to `url` (`postgres://user@host:port/database`, trust or password).
    init(_ url: URL) throws {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let configuration = PostgresConnection.Configuration(
            host: components?.host ?? "127.0.0.1", port: components?.port ?? 5432,
            username: components?.user ?? "postgres", password: components?.password,
            database: String(url.path.dropFirst()), tls: .disable)
        connection = try PostgresConnection.connect(on: Self.group.next(), configuration: configuration, id: 1, logger: Self.logger).wait()
    }

    deinit { try? connection.close().wait() }

    @discardableResult
    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> PostgresQueryResult {
        try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: Self.logger).wait()
    }

    /// The URL of database `name` on the server of `url`.
    static func url(_ url: URL, database name: String) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.path = "/\(name)"
        return components.url!
    }
}
