import AmbarPostgres
import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// The database server's doorbell listens in the task of its owner: nothing until `run()` runs,
/// and its `LISTEN` connection is closed once that task is cancelled, as the server counts the
/// connections. The `start`/`stop` wrapper does the same in a task of its own.
final class ServerDoorbellTests: XCTestCase {
    var server: PostgresTestServer!
    var database: String!
    var coordinator: PersistentStoreCoordinator!
    var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        switch Result(catching: { () throws(PostgresTestServer.Unavailable) in try PostgresTestServer.shared() }) {
        case .success(let shared): server = shared
        case .failure(let unavailable) where !PostgresTestServer.isRequired: throw XCTSkip("no PostgreSQL server on this machine: \(unavailable)")
        case .failure(let unavailable): throw unavailable
        }
        let name = "doorbell_\(UUID().uuidString.prefix(8))"
        database = PostgresTestServer.databaseName(name)
        coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .postgres(try server.url(database: name)))
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        coordinator = nil
        directory = nil
    }

    /// A hub for the store, on a socket in the test's directory.
    private func startHub() async throws -> SyncHub {
        let storeUUID = try XCTUnwrap(UUID(uuidString: coordinator.storeIdentifier))
        let socketPath = directory.url.appendingPathComponent("hub.sock").path
        return try await SyncHub.start(try SyncHub.Configuration(socketPath: socketPath, storeUUID: storeUUID, storeFile: directory.url))
    }

    func testItListensWhileItsOwnersTaskRunsAndClosesTheConnectionWhenCancelled() async throws {
        let hub = try await startHub()
        let idle = try XCTUnwrap(ServerDoorbell(coordinator: coordinator, hub: hub), "a store on a server has a doorbell")
        let running = try XCTUnwrap(ServerDoorbell(coordinator: coordinator, hub: hub))

        let listening = Task { await running.run() }
        XCTAssertEqual(try server.awaitListeners(database: database, 1), 1, "the doorbell that runs listens")
        let saysListening = await eventually { () async in running.state == .listening }
        XCTAssertTrue(saysListening, "its state says so: \(running.state)")
        listening.cancel()
        await listening.value
        // The other doorbell, made at the same time but never run, never connected: none is left.
        XCTAssertEqual(try server.awaitListeners(database: database, 0), 0, "the connection closed with the task; the idle doorbell never listened")
        XCTAssertEqual(idle.state, .connecting, "never run, never connected")

        let started = try XCTUnwrap(ServerDoorbell.start(coordinator: coordinator, hub: hub))
        XCTAssertEqual(try server.awaitListeners(database: database, 1), 1, "start(coordinator:hub:) listens in a task of its own")
        await started.stop()
        XCTAssertEqual(try server.awaitListeners(database: database, 0), 0, "stop() ended the listening and closed its connection")
        await hub.stop()
    }

    func testAStoreInAFileHasNoDoorbell() async throws {
        let file = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(directory.store))
        let hub = try await startHub()
        XCTAssertNil(ServerDoorbell(coordinator: file, hub: hub))
        XCTAssertNil(ServerDoorbell.start(coordinator: file, hub: hub))
        await hub.stop()
    }
}
