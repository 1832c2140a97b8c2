import AmbarStack
import Foundation
import XCTest

/// `save(idempotencyKey:)`: the key is recorded in the save's own transaction, and a second save
/// with it writes nothing.
final class IdempotentSaveTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testASecondSaveWithTheSameKeyWritesNothing() throws {
        let first = privateContext("first")
        let token: Int64? = try first.performAndWait {
            let a = try first.insert(Employee.self)
            a.name = "A"
            try first.save(idempotencyKey: "inbox/file-1")
            return try coordinator.savedToken(forIdempotencyKey: "inbox/file-1")
        }
        XCTAssertEqual(token, try coordinator.currentHistoryToken(), "the receipt names the save's transaction")

        // Another context (as another process would after a crash) tries the same work again.
        let second = privateContext("second")
        try second.performAndWait {
            let b = try second.insert(Employee.self)
            b.name = "B"
            XCTAssertThrowsError(try second.save(idempotencyKey: "inbox/file-1")) { error in
                XCTAssertEqual(error as? AmbarError, .alreadySaved(idempotencyKey: "inbox/file-1", token: token ?? -1))
            }
            XCTAssertTrue(second.hasChanges, "a refused save keeps the context's changes, as every failed save does")
            XCTAssertEqual(try second.count(for: FetchRequest<Employee>(predicate: Key<String>("name") == "B")), 1, "only the pending insert")
            try second.rollback()
            XCTAssertEqual(try second.count(for: FetchRequest<Employee>()), 1, "nothing of the second save was written")
            // A different key saves normally.
            let c = try second.insert(Employee.self)
            c.name = "C"
            try second.save(idempotencyKey: "inbox/file-2")
        }
        XCTAssertNil(try coordinator.savedToken(forIdempotencyKey: "inbox/file-3"))
        XCTAssertEqual(try coordinator.history(after: 0).count, 2)
    }

    func testAChildContextRefusesAnIdempotencyKey() throws {
        let root = privateContext("root")
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: root, name: "child")
        try child.performAndWait {
            let a = try child.insert(Employee.self)
            a.name = "A"
            XCTAssertThrowsError(try child.save(idempotencyKey: "k")) { error in
                guard case .saveRefused = error as? AmbarError else { return XCTFail("\(error)") }
            }
        }
    }
}
