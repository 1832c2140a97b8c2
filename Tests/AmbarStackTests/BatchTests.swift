import AmbarStack
import Foundation
import XCTest

final class BatchTests: StoreTestCase {
    func testBatchInsertUpdateDeleteReturnIDsThatMerge() throws {
        let context = privateContext()
        let viewer = privateContext("viewer")
        let inserted = try context.performAndWait {
            try context.batchInsert(entityName: "Employee", rows: (0..<10).map {
                ["name": .string("E\($0)"), "salary": .double(Double($0))]
            })
        }
        XCTAssertEqual(inserted.objectIDs.count, 10)
        XCTAssertTrue(inserted.objectIDs.allSatisfy { !$0.isTemporaryID })
        try viewer.performAndWait {
            let all = try viewer.fetch(FetchRequest<Employee>(sortDescriptors: [Key<Double>("salary").sorted()]))
            XCTAssertEqual(all.count, 10)
            XCTAssertEqual(all[0].age, 30, "defaults applied")
            _ = all.map(\.salary)
        }
        let updated = try context.performAndWait {
            try context.batchUpdate(FetchRequest<Employee>(predicate: Key<Double>("salary") >= 5), set: ["salary": .double(100)])
        }
        XCTAssertEqual(updated.objectIDs.count, 5)
        viewer.mergeChanges(fromContextDidSave: updated.notification(.updated))
        try viewer.performAndWait {
            let rich = try viewer.fetch(FetchRequest<Employee>(predicate: Key<Double>("salary") == 100))
            XCTAssertEqual(rich.count, 5)
            XCTAssertTrue(rich.allSatisfy { $0.salary == 100 }, "registered objects refreshed by the merge")
        }
        let deleted = try context.performAndWait {
            try context.batchDelete(FetchRequest<Employee>(predicate: Key<Double>("salary") < 3))
        }
        XCTAssertEqual(Set(deleted.objectIDs), Set(inserted.objectIDs.prefix(3)))
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: deleted.notification(.deleted), into: [viewer])
        try viewer.performAndWait {
            XCTAssertEqual(viewer.registeredObjectCount, 7)
            XCTAssertEqual(try viewer.count(for: FetchRequest<Employee>()), 7)
        }
    }

    func testBatchInsertRejectsBadRowsAndWritesNothing() throws {
        let context = privateContext()
        try context.performAndWait {
            assertThrows({ try context.batchInsert(entityName: "Employee", rows: [["name": .string("ok")], ["name": .integer(3)]]) }) {
                if case .typeMismatch(_, "name", .string, _) = $0 { return true }
                return false
            }
            assertThrows({ try context.batchInsert(entityName: "Employee", rows: [["nope": .string("x")]]) }) {
                if case .unknownProperty(_, "nope") = $0 { return true }
                return false
            }
            assertThrows({ try context.batchInsert(entityName: "Employee", rows: [["salary": .double(1)]]) }) {
                if case .invalidFetchRequest(let message) = $0 { return message.contains("non-optional") }
                return false
            }
            assertThrows({ try context.batchInsert(entityName: "Employee", rows: [["name": .string("a"), "email": .string("x")], ["name": .string("b"), "email": .string("x")]]) }) {
                if case .constraintViolation = $0 { return true }
                return false
            }
            XCTAssertEqual(try context.count(for: FetchRequest<Employee>()), 0)
        }
    }
}
