import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `sync-agent` commands on a store in a PostgreSQL database (`--store postgres://…` and
/// `$AMBAR_STORE`), through the built binary, with a password in the URL that must never be
/// printed.
final class PostgresCommandTests: AgentTestCase {
    var server: PostgresTestServer!
    /// The store URL, with a password (the test server trusts loopback, so any password works).
    var storeURL: String!
    static let secret = "Sesame-7f3a9"

    override func setUpWithError() throws {
        try super.setUpWithError()
        switch Result(catching: { () throws(PostgresTestServer.Unavailable) in try PostgresTestServer.shared() }) {
        case .success(let shared): server = shared
        case .failure(let unavailable) where !PostgresTestServer.isRequired: throw XCTSkip("no PostgreSQL server on this machine: \(unavailable)")
        case .failure(let unavailable): throw unavailable
        }
        let url = try server.url(database: "agent_\(UUID().uuidString.prefix(8))")
        var components = try XCTUnwrap(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.password = Self.secret
        storeURL = try XCTUnwrap(components.string)
    }

    func assertNoSecret(_ result: (status: Int32, output: String, error: String), _ command: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(result.output.contains(Self.secret) || result.error.contains(Self.secret), "\(command) printed the password", file: file, line: line)
    }

    var productsModel: URL {
        Repository.url("examples/products.model.json")
    }

    func testInitImportFetchStatusAndHistoryOnPostgreSQL() throws {
        let created = try agent(["init", "--store", storeURL, "--model", productsModel.path, "--json"])
        XCTAssertEqual(created.status, 0, created.error)
        assertNoSecret(created, "init")
        XCTAssertEqual(
            try json(created.output)["store"] as? String,
            try XCTUnwrap(storeURL.replacingOccurrences(of: ":\(Self.secret)", with: "")).components(separatedBy: "?")[0])

        let records = directory.url.appendingPathComponent("products.ndjson")
        try Data(
            """
            {"sku":"A1","title":"Lamp","price":12.5,"stock":3}
            {"sku":"A2","title":"Desk","price":99,"stock":1}
            {"sku":"A3","title":"lampshade","price":4,"stock":0}

            """.utf8
        ).write(to: records)
        // The store named by the environment instead of the option.
        var environment = ProcessInfo.processInfo.environment
        environment["AMBAR_STORE"] = storeURL
        let imported = try ProcessRunner.run(
            agentBinary, ["import", "--directory", directory.url.path, "--entity", "Product", "--key", "sku", records.path], environment: environment)
        XCTAssertEqual(imported.status, 0, imported.error)
        assertNoSecret(imported, "import")

        let fetched = try agent(["fetch", "--store", storeURL, "--entity", "Product", "--predicate", "title BEGINSWITH[c] 'lamp'", "--sort", "sku", "--json"])
        XCTAssertEqual(fetched.status, 0, fetched.error)
        XCTAssertEqual(try fetched.output.split(separator: "\n").map { try json($0)["sku"] as? String }, ["A1", "A3"])
        assertNoSecret(fetched, "fetch")

        let status = try agent(["status", "--store", storeURL, "--directory", directory.url.path, "--json"])
        XCTAssertEqual(status.status, 0, status.error)
        assertNoSecret(status, "status")
        let fields = try json(status.output)
        XCTAssertEqual(fields["backend"] as? String, "postgresql")
        XCTAssertEqual((fields["objects"] as? [String: Any])?["Product"] as? Int, 3)
        let serverFields = try XCTUnwrap(fields["server"] as? [String: Any])
        XCTAssertTrue((serverFields["version"] as? String)?.isEmpty == false, "\(serverFields)")
        XCTAssertEqual(serverFields["listeners"] as? Int, 0, "no process shares the store now")
        XCTAssertEqual(serverFields["notification_queue_usage"] as? Double, 0)

        let backup = directory.url.appendingPathComponent("store.dump")
        let backedUp = try agent(["backup", "--store", storeURL, "--to", backup.path, "--json"])
        XCTAssertEqual(backedUp.status, 0, backedUp.error)
        assertNoSecret(backedUp, "backup")
        XCTAssertEqual(try json(backedUp.output)["integrity"] as? String, "ok")
        // The archive holds the rows: restored into a new database, the store opens with them.
        let restoredName = "restored_\(UUID().uuidString.prefix(8))"
        let restoredURL = try server.url(database: restoredName)
        let restore = try ProcessRunner.run(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c",
                "pg_restore --no-owner -h 127.0.0.1 -p \(server.port) -U postgres -d \(PostgresTestServer.databaseName(restoredName)) \(backup.path)",
            ])
        XCTAssertEqual(restore.status, 0, restore.error)
        let restored = try agent(["fetch", "--store", restoredURL.absoluteString, "--entity", "Product", "--json"])
        XCTAssertEqual(restored.output.split(separator: "\n").count, 3, restored.error)
        let again = try agent(["backup", "--store", storeURL, "--to", backup.path])
        XCTAssertNotEqual(again.status, 0, "a backup never overwrites a file")

        let history = try agent(["history", "--store", storeURL, "--json"])
        XCTAssertEqual(history.status, 0, history.error)
        XCTAssertEqual(history.output.split(separator: "\n").count, 1, "one import transaction: \(history.output)")
        assertNoSecret(history, "history")
    }

    func testUnreachableServerAndWrongDatabaseAreClearErrorsWithoutTheSecret() throws {
        let wrongDatabase = storeURL.replacingOccurrences(of: "/\(URLComponents(string: storeURL)!.path.dropFirst())", with: "/no_such_database")
        let missing = try agent(["status", "--store", wrongDatabase])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.error.contains("no_such_database"), missing.error)
        assertNoSecret(missing, "status on a missing database")

        // A port where nothing listens.
        let closed = storeURL.replacingOccurrences(of: ":\(server.port)/", with: ":1/")
        let unreachable = try agent(["fetch", "--store", closed, "--entity", "Product"])
        XCTAssertNotEqual(unreachable.status, 0)
        XCTAssertTrue(unreachable.error.contains("127.0.0.1:1"), unreachable.error)
        assertNoSecret(unreachable, "fetch on an unreachable server")

        let badMode = try agent(["status", "--store", storeURL + "&sslmode=sometimes"])
        XCTAssertNotEqual(badMode.status, 0)
        XCTAssertTrue(badMode.error.contains("sslmode"), badMode.error)
        assertNoSecret(badMode, "a bad sslmode")
    }

    func testTheDemoConvergesOnPostgreSQL() throws {
        let result = try agent(["demo", "--store", storeURL, "--records", "600", "--batch", "100", "--json"], timeout: 300)
        XCTAssertEqual(result.status, 0, result.error)
        assertNoSecret(result, "demo")
        let summary = try json(result.output)
        XCTAssertEqual(summary["converged"] as? Bool, true, result.output)
        XCTAssertEqual(summary["count"] as? Int, 540, "600 inserted, a tenth deleted")
    }
}
