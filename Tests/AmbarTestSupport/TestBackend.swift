import AmbarPostgres
import AmbarStack
import Foundation

/// The backend a store test runs on: SQLite, or with `AMBAR_TEST_BACKEND=postgres` PostgreSQL (a
/// private server; see ``PostgresTestServer``). A suite is written once; one that says
/// `runsOnPostgreSQL` (`override class var … { true }` in the engine suites, `static let … = true`
/// elsewhere) runs again, unchanged, on PostgreSQL: `scripts/run-tests` runs those suites a
/// second time with the variable set.
public enum TestBackend: Sendable {
    case sqlite
    case postgres

    /// The backend of this test run.
    public static var current: TestBackend {
        ProcessInfo.processInfo.environment["AMBAR_TEST_BACKEND"] == "postgres" ? .postgres : .sqlite
    }

    /// A new store for a multi-process test on this run's backend: the file `file` (created), or
    /// a fresh database on the PostgreSQL test server; returns how helper processes name it.
    public static func makeSharedStore(model: ManagedObjectModel, file: URL) throws -> String {
        switch current {
        case .sqlite:
            _ = try PersistentStoreCoordinator(model: model, store: .sqlite(file))
            return file.path
        case .postgres:
            let url = try PostgresTestServer.shared().url(database: "shared_\(UUID().uuidString.prefix(8))")
            _ = try PersistentStoreCoordinator(model: model, store: .postgres(url))
            return url.absoluteString
        }
    }
}
