import AmbarStack
import Foundation
import XCTest

/// A save that would point at an object another save deleted meanwhile (a dangling reference) is
/// refused, and writes nothing: the related object's deletion is not silently undone by a row
/// pointing at nothing.
final class DanglingReferenceTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testAnInsertPointingAtAnObjectDeletedMeanwhileIsRefused() throws {
        let reader = privateContext("reader")
        let departmentID: ManagedObjectID = try reader.performAndWait { () throws(AmbarError) in
            let department = try reader.insert(Department.self)
            department.name = "Garden"
            try reader.save()
            return department.objectID
        }
        // Another context (as another process would) deletes the department.
        let deleter = privateContext("deleter")
        try deleter.performAndWait { () throws(AmbarError) in
            try deleter.delete(try deleter.existingObject(with: departmentID))
            try deleter.save()
        }
        try reader.performAndWait { () throws in
            let department = try XCTUnwrap(reader.registeredObject(for: departmentID) as? Department)
            let employee = try reader.insert(Employee.self)
            employee.name = "New"
            employee.department = department
            XCTAssertThrowsError(try reader.save()) { error in
                guard case AmbarError.validation(_, let property, let reason) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(property, "department")
                XCTAssertTrue(reason.contains("dangling reference"), reason)
            }
            XCTAssertTrue(reader.hasChanges, "the context keeps its changes")
            try reader.rollback()
        }
        let count = try reader.performAndWait { () throws(AmbarError) in try reader.count(for: FetchRequest<Employee>()) }
        XCTAssertEqual(count, 0, "nothing was written")
    }
}
