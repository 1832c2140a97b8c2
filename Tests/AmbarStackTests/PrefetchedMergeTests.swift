import AmbarStack
import Foundation
import XCTest

/// Merging a save with its rows read before, off the merging context's queue (what a process
/// following the ledger does): the rows serve the refresh and the results controller's load of
/// the inserted objects, and a row older than the context's own save is read again.
final class PrefetchedMergeTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    /// Saves `body` in a new context and returns the save's notification.
    private func save(_ name: String, _ body: @escaping (ManagedObjectContext) throws -> Void) throws -> DidSaveNotification {
        let writer = privateContext(name)
        let saves = Collector<DidSaveNotification>()
        let observation = writer.observeDidSave { saves.append($0) }
        defer { observation.cancel() }
        try writer.performAndWait {
            try body(writer)
            try writer.save()
        }
        return try XCTUnwrap(saves.all.first)
    }

    func testTheRowsReadAheadServeTheMergeAndTheResultsController() throws {
        let kept = try seedEmployee("Kept", salary: 10)
        let viewer = privateContext("viewer")
        let controller: FetchedResultsController<Employee> = try viewer.performAndWait {
            let controller = FetchedResultsController(
                fetchRequest: FetchRequest<Employee>(sortDescriptors: [Key<Double>("salary").sorted()]), context: viewer)
            try controller.performFetch()
            return controller
        }
        let first = try save("writer") { writer in
            (try writer.existingObject(with: kept) as? Employee)?.salary = 50
            let arrived = try writer.insert(Employee.self)
            arrived.name = "Arrived"
            arrived.salary = 20
        }
        let rows = try coordinator.prefetchRows(first.inserted.union(first.updated))
        XCTAssertEqual(rows.count, 2)
        // A later save, not merged yet: the merge must show the state of the rows it was given.
        let second = try save("later") { later in
            for employee in try later.fetch(FetchRequest<Employee>()) { employee.name += " later"; employee.salary += 100 }
        }

        _ = viewer.mergeChanges(fromContextDidSave: first, prefetched: rows)
        viewer.performAndWait {
            XCTAssertEqual(controller.fetchedObjects.map(\.name), ["Arrived", "Kept"])
            XCTAssertEqual(controller.fetchedObjects.map(\.salary), [20, 50])
        }
        viewer.mergeChanges(fromContextDidSave: second)
        viewer.performAndWait {
            XCTAssertEqual(controller.fetchedObjects.map(\.name), ["Arrived later", "Kept later"])
            XCTAssertEqual(controller.fetchedObjects.map(\.salary), [120, 150])
        }
    }

    func testARowOlderThanTheContextsOwnSaveIsReadAgain() throws {
        let id = try seedEmployee("Both", salary: 10)
        let viewer = privateContext("viewer")
        viewer.mergePolicy = .mergeByPropertyObjectTrump
        let employee: Employee = try viewer.performAndWait {
            let employee = try XCTUnwrap(try viewer.existingObject(with: id) as? Employee)
            _ = employee.name  // loaded: a merge refreshes it
            return employee
        }
        let theirs = try save("writer") { writer in (try writer.existingObject(with: id) as? Employee)?.salary = 20 }
        let rows = try coordinator.prefetchRows(theirs.updated)
        try viewer.performAndWait {
            employee.salary = 30
            try viewer.save()
        }
        _ = viewer.mergeChanges(fromContextDidSave: theirs, prefetched: rows)
        viewer.performAndWait {
            XCTAssertEqual(employee.salary, 30, "the row read before this context's save must not replace it")
            XCTAssertFalse(employee.hasChanges)
        }
    }

    func testAnObjectWhoseRowWasGoneWhenReadLeavesTheContext() throws {
        let id = try seedEmployee("Gone", salary: 10)
        let viewer = privateContext("viewer")
        let employee: Employee = try viewer.performAndWait {
            let employee = try XCTUnwrap(try viewer.existingObject(with: id) as? Employee)
            _ = employee.name  // loaded: a merge refreshes it
            return employee
        }
        let update = try save("writer") { writer in (try writer.existingObject(with: id) as? Employee)?.salary = 20 }
        _ = try save("deleter") { deleter in try deleter.delete(try deleter.existingObject(with: id)) }
        let rows = try coordinator.prefetchRows(update.updated)
        let change = viewer.mergeChanges(fromContextDidSave: update, prefetched: rows)
        XCTAssertEqual(change.invalidated, [id])
        viewer.performAndWait { XCTAssertNil(employee.managedObjectContext) }
    }
}
