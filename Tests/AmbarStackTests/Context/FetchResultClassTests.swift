import AmbarStack
import Foundation
import XCTest

/// A fetch hands back its objects as the request's class: every object of a parent entity's
/// fetch is an instance of the class of its own entity (a `Manager` among `Employee`s), and a
/// request whose class some of its objects are not throws, naming the first such object, whatever
/// its place in the result.
final class FetchResultClassTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    /// Saves employees and managers alternately (by name: e0, m1, e2, m3, …), so that a fetch
    /// sorted by name meets a new class at every object.
    private func saveStaff(_ count: Int) throws {
        let writer = privateContext("writer")
        try writer.performAndWait { () throws(AmbarError) in
            for i in 0..<count {
                let person = i.isMultiple(of: 2) ? try writer.insert(Employee.self) : try writer.insert(Manager.self)
                person.name = String(format: "%@%03d", i.isMultiple(of: 2) ? "e" : "m", i)
            }
            try writer.save()
        }
    }

    private func byName<T: ManagedObject>(_ type: T.Type, entity: String, asFaults: Bool = false, batch: Int = 0) -> FetchRequest<T> {
        var request = FetchRequest<T>(entityName: entity, sortDescriptors: [ObjectSortDescriptor(key: "name")])
        request.returnsObjectsAsFaults = asFaults
        request.fetchBatchSize = batch
        return request
    }

    func testEachObjectOfAParentEntitysFetchIsOfItsOwnEntitysClass() throws {
        try saveStaff(40)
        let reader = privateContext("reader")
        try reader.performAndWait {
            for (asFaults, batch) in [(false, 0), (true, 0), (true, 7)] {
                let staff = try reader.fetch(byName(Employee.self, entity: "Employee", asFaults: asFaults, batch: batch))
                XCTAssertEqual(staff.count, 40)
                for person in staff {
                    XCTAssertEqual(person is Manager, person.name.hasPrefix("m"), "\(person.name), faults \(asFaults), batch \(batch)")
                }
                let untyped = try reader.fetch(byName(ManagedObject.self, entity: "Employee", asFaults: asFaults, batch: batch))
                XCTAssertEqual(untyped.map(\.objectID), staff.map(\.objectID))
                let managers = try reader.fetch(byName(Manager.self, entity: "Manager", asFaults: asFaults, batch: batch))
                XCTAssertEqual(managers.map(\.name), staff.filter { $0 is Manager }.map(\.name))
            }
        }
    }

    func testARequestForAClassSomeObjectsAreNotThrowsNamingTheFirst() throws {
        try saveStaff(40)
        let reader = privateContext("reader")
        try reader.performAndWait {
            // Sorted by name the employees (e…) come first; sorted backwards a manager does, so
            // the first object passes the check and a later one fails it.
            for ascending in [true, false] {
                var request = byName(Manager.self, entity: "Employee")
                request.sortDescriptors = [ObjectSortDescriptor(key: "name", ascending: ascending)]
                XCTAssertThrowsError(try reader.fetch(request)) { error in
                    guard case .invalidFetchRequest(let message) = error as? AmbarError else {
                        return XCTFail("\(error)")
                    }
                    XCTAssertTrue(message.contains("Employee objects are Employee, not Manager"), message)
                }
            }
            XCTAssertThrowsError(try reader.fetch(byName(Department.self, entity: "Employee"))) { error in
                guard case .invalidFetchRequest(let message) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("not Department"), message)
            }
        }
    }
}
