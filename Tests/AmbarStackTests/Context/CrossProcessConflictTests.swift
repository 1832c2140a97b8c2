import AmbarStack
import Foundation
import XCTest

/// Each merge policy on a conflict made by another process (the helper executable).
final class CrossProcessConflictTests: StoreTestCase {
    private func conflictFromProcess(policy: MergePolicy) throws -> (local: (String, Double, Int16), stored: (String, Double, Int16), threw: Bool) {
        let id = try seedEmployee("Mine", salary: 10)
        let context = privateContext()
        context.mergePolicy = policy
        var threw = false
        let local: (String, Double, Int16) = try context.performAndWait {
            let employee = try XCTUnwrap(try context.existingObject(with: id) as? Employee)
            let result = try HelperProcess.run(["set", directory.file().path, id.uriString, "name=s:Theirs", "salary=d:2000"])
            XCTAssertEqual(result.status, 0, result.stderr)
            employee.salary = 1_000
            employee.age = 40
            do {
                try context.save()
            } catch AmbarError.mergeConflict(let conflicts) {
                threw = true
                XCTAssertEqual(conflicts.map(\.objectID), [id])
            }
            return (employee.name, employee.salary, employee.age)
        }
        let reader = privateContext("verify", on: try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file())))
        let stored: (String, Double, Int16) = try reader.performAndWait {
            let e = try XCTUnwrap(try reader.existingObject(with: id) as? Employee)
            return (e.name, e.salary, e.age)
        }
        // Clean for the next policy.
        try reader.performAndWait {
            for e in try reader.fetch(FetchRequest<Employee>()) { try reader.delete(e) }
            try reader.save()
        }
        return (local, stored, threw)
    }

    func testEveryPolicyAgainstAnotherProcess() throws {
        var r = try conflictFromProcess(policy: .error)
        XCTAssertTrue(r.threw)
        XCTAssertTrue(r.stored == ("Theirs", 2_000, 30))

        r = try conflictFromProcess(policy: .mergeByPropertyStoreTrump)
        XCTAssertFalse(r.threw)
        XCTAssertTrue(r.stored == ("Theirs", 2_000, 40), "\(r.stored)")
        XCTAssertTrue(r.local == r.stored)

        r = try conflictFromProcess(policy: .mergeByPropertyObjectTrump)
        XCTAssertTrue(r.stored == ("Theirs", 1_000, 40), "\(r.stored)")

        r = try conflictFromProcess(policy: .overwrite)
        XCTAssertTrue(r.stored == ("Mine", 1_000, 40), "\(r.stored)")

        r = try conflictFromProcess(policy: .rollback)
        XCTAssertTrue(r.stored == ("Theirs", 2_000, 30), "\(r.stored)")
        XCTAssertTrue(r.local == r.stored)
    }
}
