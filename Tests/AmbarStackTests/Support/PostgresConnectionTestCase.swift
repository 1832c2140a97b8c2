import AmbarCore
import AmbarTestSupport
import Foundation
import XCTest

@testable import AmbarPostgres

/// A test on one postgres-nio connection of the store (`PostgresServerConnection`) to a database
/// of its own on the test process's PostgreSQL server: skipped when no server can be started,
/// failed instead when `AMBAR_REQUIRE_POSTGRES` is set (as `scripts/run-tests` sets it).
class PostgresConnectionTestCase: XCTestCase {
    var connection: PostgresServerConnection!

    /// The database this suite's tests use.
    class var database: String { "connection_tests" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        let server: PostgresTestServer
        do {
            server = try PostgresTestServer.shared()
        } catch {
            if PostgresTestServer.isRequired { throw error }
            throw XCTSkip("no PostgreSQL server on this machine (\(error)); scripts/install-deps --postgres installs one")
        }
        connection = try PostgresServerConnection.connect(try PostgresURL(try server.url(database: Self.database)))
    }

    override func tearDown() {
        connection?.close()
        connection = nil
        super.tearDown()
    }
}
