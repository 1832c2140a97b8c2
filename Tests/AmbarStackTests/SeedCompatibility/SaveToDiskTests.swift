import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// CoreDataStack's (seed 002) `concurrentContext()` and `saveToDisk(context:completion:)` on
/// DataStack: the seed's tests plus an error injection.
final class SaveToDiskTests: XCTestCase {
    var directory: TemporaryDirectory!
    var stack: DataStack!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        stack = try DataStack.open(model: .model(try TestModel.make()), storeURL: directory.file(), name: "seed002")
    }

    override func tearDown() {
        stack = nil
        directory = nil
    }

    func saveToDisk(_ context: ManagedObjectContext? = nil) -> AmbarError? {
        let done = expectation(description: "completion")
        let result = Locked<AmbarError?>(nil)
        let onMain = Locked(false)
        stack.saveToDisk(context: context) { error in
            result.withLock { $0 = error }
            onMain.withLock { $0 = Thread.isMainThread }
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertTrue(onMain.withLock { $0 }, "the completion runs on the main queue")
        return result.withLock { $0 }
    }

    /// Employees in the store, read through a fresh coordinator.
    func storedNames() throws -> [String] {
        let coordinator = try PersistentStoreCoordinator(model: try TestModel.make(), store: .sqlite(directory.file()))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait { try Employee.fetch(in: context).map(\.name).sorted() }
    }

    func testSavingMainWithoutAContextPersists() throws {
        let main = try stack.mainContext
        try main.insert(Employee.self).name = "Main"
        XCTAssertNil(saveToDisk())
        XCTAssertEqual(try storedNames(), ["Main"])
    }

    func testAConcurrentContextIsSavedOnlyWhenPassed() throws {
        let child = try stack.concurrentContext()
        XCTAssertEqual(child.mergePolicy, .error)
        XCTAssertTrue(child.parent === (try stack.mainContext))
        try child.performAndWait { try child.insert(Employee.self).name = "Child" }
        XCTAssertNil(saveToDisk())
        XCTAssertEqual(try storedNames(), [], "not passed: its data stays in the child")
        XCTAssertNil(saveToDisk(child))
        XCTAssertEqual(try storedNames(), ["Child"])
    }

    func testAFailingChildStopsTheChainAndWritesNothing() throws {
        let child = try stack.concurrentContext()
        try child.performAndWait {
            let employee = try child.insert(Employee.self)
            try employee.setValue(.null, forKey: "name")  // required
        }
        let error = saveToDisk(child)
        guard case .validation = error else { return XCTFail("expected a validation error, got \(String(describing: error))") }
        XCTAssertEqual(try storedNames(), [])
        XCTAssertTrue(child.performAndWait { child.hasChanges }, "the child keeps its changes")
    }

    func testAfterDeleteStoreSaveToDiskFailsAtOnce() throws {
        try stack.deleteStore()
        XCTAssertNoThrow(try stack.deleteStore(), "a second delete is silently fine (D4)")
        let result = Locked<AmbarError?>(nil)
        stack.saveToDisk { error in result.withLock { $0 = error } }
        XCTAssertEqual(result.withLock { $0 }, .storeDeleted, "delivered synchronously, on the caller's thread")
        XCTAssertNoThrow(try stack.concurrentContext(), "a concurrent context can still be made")
    }
}
