import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// The PostgreSQL backend sets the isolation its transactions rely on itself: on a server whose
/// `default_transaction_isolation` is SERIALIZABLE (every test server's), writers that update the
/// same rows and move consumer positions at once all succeed, where transactions left at the
/// server's level fail with SQLSTATE 40001.
final class PostgresIsolationTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard backend == .postgres else { throw XCTSkip("the isolation level is PostgreSQL's: this suite runs in the PostgreSQL pass") }
    }

    /// The pass really runs on a SERIALIZABLE server: a plain client's transactions are.
    func testTheTestServersDefaultIsolationIsSerializable() throws {
        let server = try PostgresTestServer.shared()
        let shown = try server.psql(["-d", "postgres", "-At", "-c", "SHOW default_transaction_isolation"])
        XCTAssertEqual(shown.status, 0, shown.error)
        XCTAssertEqual(shown.output.trimmingCharacters(in: .whitespacesAndNewlines), PostgresTestServer.defaultIsolation)
    }

    /// Writers on several connections update one object again and again (each save a
    /// compare-and-set of its version, resolved by the merge policy) and move one consumer's
    /// position: none fails, and every update landed.
    func testConcurrentUpdatesAndPositionMovesSucceedOnASerializableServer() throws {
        let writers = 4
        let savesEach = 25
        let seeded = privateContext("seed")
        let id = try seeded.performAndWait { () throws(AmbarError) -> ManagedObjectID in
            let employee = try seeded.insert(Employee.self)
            employee.name = "shared"
            employee.salary = -1
            try seeded.save()
            return employee.objectID
        }
        let coordinators = try (0..<writers).map { _ in try PersistentStoreCoordinator(model: model, store: try store()) }
        let errors = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: writers) { w in
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinators[w], name: "writer\(w)")
            context.mergePolicy = .mergeByPropertyObjectTrump
            for n in 0..<savesEach {
                do {
                    try context.performAndWait { () throws(AmbarError) in
                        guard let employee = try context.existingObject(with: id) as? Employee else {
                            errors.withLock { $0.append("writer \(w), save \(n): the object is not an Employee") }
                            return
                        }
                        employee.salary = Double(w * 1_000 + n)
                        try context.save()
                        try context.refreshAllObjects()
                    }
                    try coordinators[w].setHistoryCursor(consumer: "shared-position", token: Int64(n), lease: 60)
                } catch {
                    errors.withLock { $0.append("writer \(w), save \(n): \(error)") }
                }
            }
        }
        XCTAssertEqual(errors.withLock { $0 }, [], "no save or position move failed")
        XCTAssertEqual(try coordinator.history(after: 0).count, 1 + writers * savesEach, "every update is a transaction of its own")
    }
}
