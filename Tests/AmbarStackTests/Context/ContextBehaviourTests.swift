import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

final class ContextBehaviourTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testInMemoryStoreWritesNoFilesAndForgets() throws {
        let empty = try TemporaryDirectory()
        let memory = try PersistentStoreCoordinator(model: model, store: .inMemory)
        XCTAssertEqual(memory.storeLocation, ":memory:")
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: memory)
        try context.performAndWait {
            let e = try context.insert(Employee.self)
            e.name = "Volatile"
            try context.save()
            XCTAssertEqual(try context.count(for: FetchRequest<Employee>()), 1)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: empty.url.path), [])
        let again = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: model, store: .inMemory))
        XCTAssertEqual(try again.performAndWait { try again.count(for: FetchRequest<Employee>()) }, 0)
    }

    func testObtainPermanentIDsBeforeSave() throws {
        let context = privateContext()
        try context.performAndWait {
            let dept = try context.insert(Department.self)
            dept.name = "D"
            let e = try context.insert(Employee.self)
            e.name = "E"
            e.department = dept
            try context.obtainPermanentIDs(for: [dept, e])
            XCTAssertFalse(e.objectID.isTemporaryID)
            XCTAssertTrue(e.isInserted)
            let id = e.objectID
            XCTAssertTrue(try context.object(with: id) === e)
            try context.save()
            XCTAssertEqual(e.objectID, id, "the saved row keeps the obtained key")
            XCTAssertTrue(e.department === dept)
        }
        let fresh = privateContext("fresh")
        try fresh.performAndWait {
            XCTAssertEqual(try fresh.fetch(FetchRequest<Employee>()).first?.department?.name, "D")
        }
    }

    func testChildContextsMergeSiblingSavesAutomatically() throws {
        let id = try seedEmployee("A", salary: 1)
        let parent = privateContext("parent")
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent, name: "reader")
        reader.automaticallyMergesChangesFromParent = true
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent, name: "writer")
        try reader.performAndWait { XCTAssertEqual((try reader.existingObject(with: id) as? Employee)?.salary, 1) }
        try writer.performAndWait {
            (try writer.existingObject(with: id) as? Employee)?.salary = 8
            try writer.save()
        }
        var salary = 0.0
        let merged = eventually(timeout: 5, every: 0.001) {
            salary = reader.performAndWait { (reader.registeredObject(for: id) as? Employee)?.salary ?? 0 }
            return salary == 8
        }
        XCTAssertTrue(merged, "the reader has salary \(salary)")
    }

    func testMainQueueContextRunsOnTheMainThread() async throws {
        let main = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: coordinator, name: "main")
        let onMain = try await main.perform { () throws(AmbarError) -> Bool in
            let e = try main.insert(Employee.self)
            e.name = "Main"
            try main.save()
            return Thread.isMainThread
        }
        XCTAssertTrue(onMain)
        let background = privateContext("background")
        let names = try await background.perform { () throws(AmbarError) in try background.fetch(FetchRequest<Employee>()).map(\.name) }
        XCTAssertEqual(names, ["Main"])
    }

    func testUpdateCollidingWithAUniqueValueIsATypedError() throws {
        let taken = try seedEmployee("A", email: "a@x")
        let mine = try seedEmployee("B", email: "b@x")
        let context = privateContext()
        try context.performAndWait {
            let b = try XCTUnwrap(try context.existingObject(with: mine) as? Employee)
            b.email = "a@x"
            assertThrows({ try context.save() }) {
                if case .constraintViolation("Employee", ["email"], [.string("a@x")], taken) = $0 { return true }
                return false
            }
            XCTAssertTrue(b.hasChanges)
        }
    }
}
