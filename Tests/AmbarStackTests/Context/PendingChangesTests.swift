import AmbarStack
import Foundation
import XCTest

final class PendingChangesTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testFetchIncludesPendingChangesByDefault() throws {
        _ = try seedEmployee("Saved", salary: 10)
        _ = try seedEmployee("ToDelete", salary: 10)
        _ = try seedEmployee("ToChange", salary: 10)
        let context = privateContext()
        try context.performAndWait {
            let new = try context.insert(Employee.self)
            new.name = "New"
            new.salary = 10
            let all = try context.fetch(FetchRequest<Employee>())
            try context.delete(try XCTUnwrap(all.first { $0.name == "ToDelete" }))
            try XCTUnwrap(all.first { $0.name == "ToChange" }).salary = 500
            let request = FetchRequest<Employee>(predicate: Key<Double>("salary") == 10, sortDescriptors: [Key<String>("name").sorted()])
            XCTAssertEqual(try context.fetch(request).map(\.name), ["New", "Saved"])
            XCTAssertEqual(try context.count(for: request), 2)
            var storeOnly = request
            storeOnly.includesPendingChanges = false
            XCTAssertEqual(try context.fetch(storeOnly).map(\.name), ["Saved", "ToChange", "ToDelete"])
            var window = request
            window.fetchLimit = 1
            window.fetchOffset = 1
            XCTAssertEqual(try context.fetch(window).map(\.name), ["Saved"], "limit and offset apply after the overlay")
        }
    }

    func testFetchObjectIDsValuesDistinctAndBatches() throws {
        for (name, salary) in [("A", 1.0), ("B", 2.0), ("C", 2.0), ("D", 3.0)] { _ = try seedEmployee(name, salary: salary) }
        let context = privateContext()
        try context.performAndWait {
            let ids = try context.fetchObjectIDs(FetchRequest<Employee>(sortDescriptors: [Key<String>("name").sorted(ascending: false)]))
            XCTAssertEqual(ids.count, 4)
            XCTAssertEqual(context.registeredObjectCount, 0, "ID fetches make no objects")
            let values = try context.fetchValues(
                FetchRequest<Employee>(sortDescriptors: [Key<Double>("salary").sorted()]), properties: ["salary"], distinct: true)
            XCTAssertEqual(values.map { $0["salary"] }, [.double(1), .double(2), .double(3)])
            var batched = FetchRequest<Employee>(sortDescriptors: [Key<String>("name").sorted()])
            batched.fetchBatchSize = 2
            let objects = try context.fetch(batched)
            XCTAssertTrue(objects.allSatisfy { $0.isFault })
            XCTAssertEqual(objects[0].name, "A")
            XCTAssertTrue(objects[1].isFault, "still a fault, but its data came with the batch")
            XCTAssertEqual(objects.map(\.name), ["A", "B", "C", "D"])
        }
    }
}
