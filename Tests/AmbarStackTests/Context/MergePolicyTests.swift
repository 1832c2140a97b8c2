import AmbarStack
import Foundation
import XCTest

/// Each policy on a conflict made by a second coordinator on the same file.
final class MergePolicyTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private var secondCoordinator: PersistentStoreCoordinator!

    override func setUpWithError() throws {
        try super.setUpWithError()
        secondCoordinator = try PersistentStoreCoordinator(model: model, store: try store())
    }

    override func tearDown() {
        secondCoordinator = nil
        super.tearDown()
    }

    /// Reads the employee in `context`, then changes name and salary behind its back through the
    /// second coordinator, then edits `salary` and `age` locally. Returns the local object.
    private func makeConflict(_ context: ManagedObjectContext, id: ManagedObjectID) throws -> Employee {
        let employee = try XCTUnwrap(try context.existingObject(with: id) as? Employee)
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: secondCoordinator)
        try other.performAndWait {
            let theirs = try XCTUnwrap(try other.existingObject(with: id) as? Employee)
            theirs.name = "Theirs"
            theirs.salary = 2_000
            try other.save()
        }
        employee.salary = 1_000
        employee.age = 40
        return employee
    }

    private func stored(_ id: ManagedObjectID) throws -> (name: String, salary: Double, age: Int16) {
        let reader = privateContext("verify", on: try PersistentStoreCoordinator(model: model, store: try store()))
        return try reader.performAndWait {
            let e = try XCTUnwrap(try reader.existingObject(with: id) as? Employee)
            return (e.name, e.salary, e.age)
        }
    }

    func testErrorPolicyThrowsListingConflictsAndWritesNothing() throws {
        let id = try seedEmployee("Mine", salary: 10)
        let context = privateContext()
        try context.performAndWait {
            let employee = try makeConflict(context, id: id)
            let other = try context.insert(Employee.self)
            other.name = "Innocent bystander"
            do {
                try context.save()
                XCTFail("expected a merge conflict")
            } catch AmbarError.mergeConflict(let conflicts) {
                XCTAssertEqual(conflicts.count, 1)
                XCTAssertEqual(conflicts[0].objectID, id)
                XCTAssertEqual(conflicts[0].cachedVersion, 1)
                XCTAssertEqual(conflicts[0].currentVersion, 2)
                XCTAssertEqual(conflicts[0].cachedSnapshot["name"], .string("Mine"))
                XCTAssertEqual(conflicts[0].persistedSnapshot["name"], .string("Theirs"))
            }
            XCTAssertTrue(employee.hasChanges, "changes kept")
            XCTAssertTrue(other.isInserted)
        }
        XCTAssertEqual(try stored(id).salary, 2_000)
        try context.performAndWait {
            XCTAssertEqual(
                try context.count(for: FetchRequest<Employee>(predicate: Key<String>("name") == "Innocent bystander")), 1, "pending insert still visible")
        }
        let fresh = privateContext("fresh")
        try fresh.performAndWait {
            XCTAssertEqual(try fresh.count(for: FetchRequest<Employee>()), 1, "nothing of the failed save was written")
        }
    }

    func testStoreTrumpKeepsStoreValuesForPropertiesBothChanged() throws {
        let id = try seedEmployee("Mine", salary: 10)
        let context = privateContext()
        context.mergePolicy = .mergeByPropertyStoreTrump
        try context.performAndWait {
            let employee = try makeConflict(context, id: id)
            try context.save()
            XCTAssertEqual(employee.salary, 2_000, "both changed salary: store wins")
            XCTAssertEqual(employee.name, "Theirs")
            XCTAssertEqual(employee.age, 40, "only we changed age: ours kept")
            XCTAssertFalse(employee.hasChanges)
        }
        let s = try stored(id)
        XCTAssertEqual(s.name, "Theirs")
        XCTAssertEqual(s.salary, 2_000)
        XCTAssertEqual(s.age, 40)
    }

    func testObjectTrumpKeepsOurChangedPropertiesAndTheirOthers() throws {
        let id = try seedEmployee("Mine", salary: 10)
        let context = privateContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        try context.performAndWait {
            let employee = try makeConflict(context, id: id)
            try context.save()
            XCTAssertEqual(employee.salary, 1_000)
            XCTAssertEqual(employee.name, "Theirs", "we did not change name: theirs kept")
        }
        let s = try stored(id)
        XCTAssertEqual(s.name, "Theirs")
        XCTAssertEqual(s.salary, 1_000)
        XCTAssertEqual(s.age, 40)
    }

    func testOverwriteWritesTheWholeObject() throws {
        let id = try seedEmployee("Mine", salary: 10)
        let context = privateContext()
        context.mergePolicy = .overwrite
        try context.performAndWait {
            _ = try makeConflict(context, id: id)
            try context.save()
        }
        let s = try stored(id)
        XCTAssertEqual(s.name, "Mine", "our unchanged name overwrote theirs")
        XCTAssertEqual(s.salary, 1_000)
        XCTAssertEqual(s.age, 40)
    }

    func testRollbackDiscardsConflictingObjectButSavesOthers() throws {
        let id = try seedEmployee("Mine", salary: 10)
        let context = privateContext()
        context.mergePolicy = .rollback
        try context.performAndWait {
            let employee = try makeConflict(context, id: id)
            let newcomer = try context.insert(Employee.self)
            newcomer.name = "Newcomer"
            try context.save()
            XCTAssertEqual(employee.salary, 2_000, "our change discarded")
            XCTAssertEqual(employee.age, 30)
            XCTAssertFalse(employee.hasChanges)
        }
        let s = try stored(id)
        XCTAssertEqual(s.salary, 2_000)
        XCTAssertEqual(s.age, 30)
        let fresh = privateContext("fresh")
        try fresh.performAndWait {
            XCTAssertEqual(try fresh.count(for: FetchRequest<Employee>(predicate: Key<String>("name") == "Newcomer")), 1)
        }
    }

    func testUpdateOfRowDeletedElsewhere() throws {
        let id = try seedEmployee("Mine")
        let context = privateContext()
        try context.performAndWait {
            let employee = try XCTUnwrap(try context.existingObject(with: id) as? Employee)
            let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: secondCoordinator)
            try other.performAndWait {
                try other.delete(try other.existingObject(with: id))
                try other.save()
            }
            employee.salary = 5
            do {
                try context.save()
                XCTFail("expected a conflict")
            } catch AmbarError.mergeConflict(let conflicts) {
                XCTAssertEqual(conflicts.first?.currentVersion, 0, "0 means deleted")
            }
            context.mergePolicy = .mergeByPropertyObjectTrump
            try context.save()
            XCTAssertNil(employee.managedObjectContext, "the object is gone")
        }
    }

    func testUniquenessConstraintPerPolicy() throws {
        let existing = try seedEmployee("Original", salary: 1, email: "a@x")
        let context = privateContext()
        try context.performAndWait {
            let dup = try context.insert(Employee.self)
            dup.name = "Duplicate"
            dup.email = "a@x"
            assertThrows({ try context.save() }) {
                if case .constraintViolation(let entity, let attributes, _, let holder) = $0 {
                    return entity == "Employee" && attributes == ["email"] && holder == existing
                }
                return false
            }
            context.mergePolicy = .mergeByPropertyObjectTrump
            try context.save()
            XCTAssertEqual(dup.objectID, existing, "the insert became the existing object")
            XCTAssertEqual(dup.name, "Duplicate")
            let dup2 = try context.insert(Employee.self)
            dup2.name = "Ignored"
            dup2.email = "a@x"
            context.mergePolicy = .mergeByPropertyStoreTrump
            try context.save()
            XCTAssertEqual(dup2.objectID, existing)
            XCTAssertEqual(dup2.name, "Duplicate", "store values won")
        }
        let fresh = privateContext("fresh")
        try fresh.performAndWait {
            let all = try fresh.fetch(FetchRequest<Employee>())
            XCTAssertEqual(all.count, 1)
            XCTAssertEqual(all.first?.name, "Duplicate")
        }
    }

    /// A large insert-only save goes to the store first and looks up the holders of unique values
    /// only when a row is refused (enough inserts for every backend to take that path): a
    /// collision with a stored row, or between two new objects, is still resolved by the policy,
    /// and a refused save writes nothing.
    func testLargeInsertSavesResolveCollisionsLikeSmallOnes() throws {
        let existing = try seedEmployee("Original", salary: 1, email: "taken@x")
        let context = privateContext()
        try context.performAndWait {
            for i in 0..<1_200 {
                let employee = try context.insert(Employee.self)
                employee.name = "New \(i)"
                employee.email = i == 600 ? "taken@x" : "new\(i)@x"
            }
            assertThrows({ try context.save() }) {
                if case .constraintViolation(_, let attributes, _, let holder) = $0 { return attributes == ["email"] && holder == existing }
                return false
            }
            XCTAssertEqual(context.insertedObjects.count, 1_200, "the refused save keeps every change")
        }
        let check = privateContext("check")
        try check.performAndWait {
            XCTAssertEqual(try check.count(for: FetchRequest<Employee>()), 1, "nothing of the refused save was written")
        }

        try context.performAndWait {
            context.mergePolicy = .mergeByPropertyObjectTrump
            let twin = try context.insert(Employee.self)
            twin.name = "Twin"
            twin.email = "new5@x"
            try context.save()
            XCTAssertEqual(context.insertedObjects.count, 0)
        }
        let fresh = privateContext("fresh")
        try fresh.performAndWait {
            let all = try fresh.fetch(FetchRequest<Employee>())
            XCTAssertEqual(all.count, 1_200, "1,199 new rows, the collision became the stored row, the twins one row")
            XCTAssertEqual(all.first { $0.email == "taken@x" }?.objectID, existing)
            XCTAssertEqual(all.first { $0.email == "taken@x" }?.name, "New 600")
            XCTAssertEqual(all.filter { $0.email == "new5@x" }.count, 1)
        }
    }
}
