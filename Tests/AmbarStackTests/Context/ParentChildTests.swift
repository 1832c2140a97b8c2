import AmbarStack
import Foundation
import XCTest

final class ParentChildTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testChildSaveBecomesParentUnsavedChanges() throws {
        let id = try seedEmployee("Ada", salary: 10)
        let parent = privateContext("parent")
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent, name: "child")
        let newID: ManagedObjectID = try child.performAndWait {
            let ada = try XCTUnwrap(try child.existingObject(with: id) as? Employee)
            ada.salary = 20
            let bob = try child.insert(Employee.self)
            bob.name = "Bob"
            try child.save()
            XCTAssertFalse(child.hasChanges)
            XCTAssertFalse(bob.objectID.isTemporaryID, "child saves obtain permanent IDs")
            return bob.objectID
        }
        try parent.performAndWait {
            XCTAssertTrue(parent.hasChanges)
            let ada = try XCTUnwrap(parent.registeredObject(for: id) as? Employee)
            XCTAssertEqual(ada.salary, 20)
            XCTAssertTrue(ada.isUpdated)
            let bob = try XCTUnwrap(parent.registeredObject(for: newID))
            XCTAssertTrue(bob.isInserted)
        }
        // Nothing reached the store yet.
        let fresh = privateContext("fresh")
        try fresh.performAndWait {
            XCTAssertEqual(try fresh.count(for: FetchRequest<Employee>()), 1)
            XCTAssertEqual((try fresh.existingObject(with: id) as? Employee)?.salary, 10)
        }
        try parent.performAndWait { try parent.save() }
        try fresh.performAndWait {
            try fresh.reset()
            XCTAssertEqual(try fresh.count(for: FetchRequest<Employee>()), 2)
            XCTAssertEqual((try fresh.existingObject(with: id) as? Employee)?.salary, 20)
            XCTAssertNotNil(try fresh.existingObject(with: newID))
        }
    }

    func testChildSeesParentsUnsavedChangesInFetchesAndFaults() throws {
        let id = try seedEmployee("Ada", salary: 10)
        _ = try seedEmployee("Gone", salary: 5)
        let parent = privateContext("parent")
        try parent.performAndWait {
            let ada = try XCTUnwrap(try parent.existingObject(with: id) as? Employee)
            ada.salary = 99
            let carl = try parent.insert(Employee.self)
            carl.name = "Carl"
            carl.salary = 50
            let gone = try parent.fetch(FetchRequest<Employee>(predicate: Key<String>("name") == "Gone"))[0]
            try parent.delete(gone)
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        try child.performAndWait {
            let rich = try child.fetch(FetchRequest<Employee>(predicate: Key<Double>("salary") > 20, sortDescriptors: [Key<String>("name").sorted()]))
            XCTAssertEqual(rich.map(\.name), ["Ada", "Carl"])
            XCTAssertEqual(rich[0].salary, 99)
            XCTAssertEqual(try child.count(for: FetchRequest<Employee>()), 2, "the deleted one is gone, the inserted one counts")
            let fault = try XCTUnwrap(try child.object(with: id) as? Employee)
            XCTAssertEqual(fault.salary, 99, "faults fill from the parent's state")
        }
    }

    func testGrandchildSavesThroughTheChain() throws {
        let root = privateContext("root")
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: root)
        let grandchild = ManagedObjectContext(concurrencyType: .privateQueue, parent: child)
        try grandchild.performAndWait {
            let e = try grandchild.insert(Employee.self)
            e.name = "Deep"
            try grandchild.save()
        }
        try child.performAndWait {
            XCTAssertEqual(try child.fetch(FetchRequest<Employee>()).map(\.name), ["Deep"])
            try child.save()
        }
        try root.performAndWait { try root.save() }
        let fresh = privateContext("fresh")
        XCTAssertEqual(try fresh.performAndWait { try fresh.fetch(FetchRequest<Employee>()).map(\.name) }, ["Deep"])
    }

    /// The core's one rule for empty saves: a child without changes saves nothing of its own, and
    /// its ancestors still save when propagating.
    func testAnEmptyChildStillSavesItsAncestorsWhenPropagating() throws {
        let parent = privateContext("parent")
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent, name: "child")
        try parent.performAndWait {
            let ada = try parent.insert(Employee.self)
            ada.name = "Ada"
        }
        try child.performAndWait {
            XCTAssertFalse(child.hasChanges)
            try child.save(propagating: true)
        }
        XCTAssertFalse(parent.performAndWait { parent.hasChanges }, "the parent saved")
        let reader = privateContext("reader")
        XCTAssertEqual(try reader.performAndWait { try reader.fetch(FetchRequest<Employee>()).map(\.name) }, ["Ada"])
    }
}
