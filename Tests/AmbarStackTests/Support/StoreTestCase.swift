import AmbarStack
import AmbarTestSupport
import Foundation
import GRDB
import XCTest

@testable import AmbarPostgres

/// A test with a temporary directory and the test model (``TestModel``), fresh for each test.
class ModelTestCase: XCTestCase {
    var directory: TemporaryDirectory!
    var model: ManagedObjectModel!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        model = try TestModel.make()
    }

    override func tearDown() { directory = nil }
}

/// A test with a coordinator on a store of the test model, on the run's backend (SQLite, or
/// PostgreSQL for the suites that say they hold there too).
class StoreTestCase: ModelTestCase {
    var coordinator: PersistentStoreCoordinator!
    /// Distinguishes this test's PostgreSQL databases from every other test's.
    private let storePrefix = UUID().uuidString.prefix(8)

    /// Whether the suite's tests hold on PostgreSQL too.
    class var runsOnPostgreSQL: Bool { false }
    /// The backend of this run.
    let backend = TestBackend.current

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        let prefix = backend == .postgres ? "[on PostgreSQL] " : ""
        super.recordFailure(withDescription: prefix + description, inFile: filePath, atLine: lineNumber, expected: expected)
    }

    override func setUpWithError() throws {
        if backend == .postgres && !Self.runsOnPostgreSQL {
            throw XCTSkip("\(Self.self) is for SQLite stores only")
        }
        try super.setUpWithError()
        coordinator = try PersistentStoreCoordinator(model: model, store: try store())
    }

    /// Changes the store `name` with a plain client of its backend (GRDB, or psql), past any
    /// Ambar code: for states only another program (or another clock) would leave.
    func rawExecute(_ sql: String, store name: String = "store.sqlite") throws {
        switch backend {
        case .sqlite:
            try DatabaseQueue(path: directory.file(name).path).write { db in try db.execute(sql: sql) }
        case .postgres:
            _ = try rawRows(sql, store: name)
        }
    }

    /// Runs `sql` on the store `name` with a plain client of its backend (GRDB, or psql) and
    /// returns each row's columns joined by `|`: what is really stored, past any Ambar code.
    func rawRows(_ sql: String, store name: String = "store.sqlite") throws -> [String] {
        switch backend {
        case .sqlite:
            return try DatabaseQueue(path: directory.file(name).path).read { db in
                try Row.fetchAll(db, sql: sql).map { row in row.databaseValues.map { $0.isNull ? "" : "\($0.storage.value ?? "")" }.joined(separator: "|") }
            }
        case .postgres:
            let server = try PostgresTestServer.shared()
            let result = try server.psql(["-d", PostgresTestServer.databaseName("\(storePrefix)_\(name)"), "-At", "-F", "|", "-c", sql])
            guard result.status == 0 else { throw PostgresTestServer.Unavailable(description: "psql failed: \(result.error)") }
            return result.output.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        }
    }

    /// How a helper process names the store `name`: its path, or its PostgreSQL URL.
    func storeArgument(_ name: String = "store.sqlite") throws -> String {
        switch try store(name) {
        case .sqlite(let url): return url.path
        case .server: return try PostgresTestServer.shared().url(database: "\(storePrefix)_\(name)").absoluteString
        case .inMemory: return ":memory:"
        }
    }

    /// The store named `name` on this suite's backend: a file in the test's directory, or a
    /// database of its own on the PostgreSQL test server. The same name is the same store.
    func store(_ name: String = "store.sqlite") throws -> StoreDescription {
        switch backend {
        case .sqlite:
            return .sqlite(directory.file(name))
        case .postgres:
            do {
                return try PostgresTestServer.shared().store("\(storePrefix)_\(name)")
            } catch let unavailable as PostgresTestServer.Unavailable where !PostgresTestServer.isRequired {
                throw XCTSkip("no PostgreSQL server on this machine: \(unavailable)")
            }
        }
    }

    override func tearDown() {
        coordinator = nil
        super.tearDown()
    }

    /// The PostgreSQL store under test, for suites about what only a server does (`topic`: round
    /// trips, prepared statements); in the SQLite pass the suite is skipped, saying that it runs
    /// in the PostgreSQL pass (which `scripts/run-tests` always runs, on a private server).
    func postgreSQLStore(_ topic: String) throws -> PostgreSQLStore {
        guard backend == .postgres else { throw XCTSkip("\(topic) are a server's: this suite runs in the PostgreSQL pass") }
        return try XCTUnwrap(coordinator.store as? PostgreSQLStore)
    }

    func privateContext(_ name: String = "test", on coordinator: PersistentStoreCoordinator? = nil) -> ManagedObjectContext {
        ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator ?? self.coordinator, name: name)
    }

    /// Asserts that `body` throws an ``AmbarError`` matching `check`.
    func assertThrows<T>(_ body: () throws -> T, _ check: (AmbarError) -> Bool, file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try body()
            XCTFail("expected an error", file: file, line: line)
        } catch let error as AmbarError {
            XCTAssertTrue(check(error), "unexpected error: \(error)", file: file, line: line)
        } catch {
            XCTFail("not an AmbarError: \(error)", file: file, line: line)
        }
    }
}
