import AmbarStack
import Foundation
import GRDB
import XCTest

final class BatchTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testBatchInsertUpdateDeleteReturnIDsThatMerge() throws {
        let context = privateContext()
        let viewer = privateContext("viewer")
        let inserted = try context.performAndWait {
            try context.batchInsert(
                entityName: "Employee",
                rows: (0..<10).map {
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

    /// Thousands of matches (one bound ID list, no chunks): every row is updated or deleted, and a
    /// deleted object's many-to-many join rows go with it.
    func testLargeBatchesReachEveryRowAndTheirJoinRows() throws {
        let context = privateContext()
        try context.performAndWait {
            _ = try context.batchInsert(
                entityName: "Employee",
                rows: (0..<1_200).map {
                    ["name": .string("E\($0)"), "salary": .double(Double($0 % 2))]
                })
            let project = try context.insert(Project.self)
            project.title = "P"
            for employee in try context.fetch(FetchRequest<Employee>(predicate: Key<Double>("salary") == 1)) {
                employee.projects.insert(project)
            }
            try context.save()

            XCTAssertEqual(try context.batchUpdate(FetchRequest<Employee>(), set: ["age": .integer(41)]).objectIDs.count, 1_200)
            XCTAssertEqual(try context.count(for: FetchRequest<Employee>(predicate: Key<Int16>("age") == 41)), 1_200)
            XCTAssertEqual(try context.batchDelete(FetchRequest<Employee>(predicate: Key<Double>("salary") == 1)).objectIDs.count, 600)
            XCTAssertEqual(try context.count(for: FetchRequest<Employee>()), 600)
        }
        // Read the join table itself: loading `members` would hide dangling rows (it joins).
        let tables = try rawRows(
            backend == .sqlite
                ? #"SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\_%\_%' ESCAPE '\'"#
                : #"SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'Z\_%\_%' ESCAPE '\'"#)
        XCTAssertEqual(tables.count, 1, "one join table (employees ↔ projects)")
        let joinRows = try tables.reduce(0) { $0 + (Int(try rawRows("SELECT count(*) FROM \"\($1)\"").first ?? "") ?? -1) }
        XCTAssertEqual(joinRows, 0, "the deleted members' join rows are gone")
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
            assertThrows({
                try context.batchInsert(
                    entityName: "Employee", rows: [["name": .string("a"), "email": .string("x")], ["name": .string("b"), "email": .string("x")]])
            }) {
                if case .constraintViolation = $0 { return true }
                return false
            }
            XCTAssertEqual(try context.count(for: FetchRequest<Employee>()), 0)
        }
    }
}
