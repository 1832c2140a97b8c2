import AmbarStack
import Foundation
import XCTest

/// An object turned back into a fault (a refresh without merging, `refreshAllObjects()`) is a
/// fault like one never read: when its row is gone by the time it fires, it reads as empty, as
/// Core Data's inaccessible faults do — never its old values, nor the unsaved edits the refresh
/// discarded.
final class RefreshedFaultTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    /// Ada, of the Research department, saved; her ID.
    private func savedEmployee() throws -> ManagedObjectID {
        let writer = privateContext("writer")
        return try writer.performAndWait { () throws(AmbarError) -> ManagedObjectID in
            let department = try writer.insert(Department.self)
            department.name = "Research"
            let employee = try writer.insert(Employee.self)
            employee.name = "Ada"
            employee.email = "ada@example.com"
            employee.department = department
            try writer.save()
            return employee.objectID
        }
    }

    private func deleteElsewhere(_ id: ManagedObjectID) throws {
        let other = privateContext("other")
        try other.performAndWait { () throws(AmbarError) in
            try other.delete(try other.existingObject(with: id))
            try other.save()
        }
    }

    private func assertReadsAsEmpty(_ employee: Employee?, in context: ManagedObjectContext, file: StaticString = #filePath, line: UInt = #line) {
        context.performAndWait {
            XCTAssertEqual(employee?.name, "", "its old or discarded name", file: file, line: line)
            XCTAssertNil(employee?.email, file: file, line: line)
            XCTAssertNil(employee?.department, "its old department", file: file, line: line)
            XCTAssertEqual(employee?.committedValues(forKeys: ["name"]), ["name": .null], file: file, line: line)
        }
    }

    /// Ada as `reader` read her (her department loaded), then `refresh` in `reader`; the object,
    /// asserted to be a fault again.
    private func refreshedEmployee(
        _ id: ManagedObjectID, in reader: ManagedObjectContext, _ refresh: (Employee) throws -> Void
    ) throws -> Employee? {
        try reader.performAndWait { () throws -> Employee? in
            let employee = try XCTUnwrap(try reader.existingObject(with: id) as? Employee)
            XCTAssertEqual(employee.department?.name, "Research")
            try refresh(employee)
            XCTAssertTrue(employee.isFault)
            return employee
        }
    }

    func testAnObjectRefreshedWithoutMergingWhoseRowIsDeletedReadsAsEmpty() throws {
        let id = try savedEmployee()
        let context = privateContext("reader")
        let employee = try refreshedEmployee(id, in: context) { employee in
            employee.name = "edited, then discarded"
            try context.refresh(employee, mergeChanges: false)
        }
        try deleteElsewhere(id)
        assertReadsAsEmpty(employee, in: context)
    }

    func testObjectsRefreshedAllTogetherWhoseRowIsDeletedReadAsEmpty() throws {
        let id = try savedEmployee()
        let context = privateContext("reader")
        let employee = try refreshedEmployee(id, in: context) { _ in try context.refreshAllObjects() }
        try deleteElsewhere(id)
        assertReadsAsEmpty(employee, in: context)
    }

    /// The refreshed fault reads the row as it is now when the row is still there.
    func testARefreshedObjectReadsTheRowAsItIsNow() throws {
        let id = try savedEmployee()
        let context = privateContext("reader")
        let employee = try refreshedEmployee(id, in: context) { employee in
            employee.name = "edited, then discarded"
            try context.refresh(employee, mergeChanges: false)
        }
        let other = privateContext("other")
        try other.performAndWait { () throws(AmbarError) in
            (try other.existingObject(with: id) as? Employee)?.email = "ada@elsewhere.example"
            try other.save()
        }
        context.performAndWait {
            XCTAssertEqual(employee?.name, "Ada")
            XCTAssertEqual(employee?.email, "ada@elsewhere.example")
            XCTAssertEqual(employee?.department?.name, "Research")
            XCTAssertEqual(employee?.hasChanges, false)
        }
    }
}
