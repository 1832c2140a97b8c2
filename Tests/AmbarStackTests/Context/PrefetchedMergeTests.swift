import AmbarStack
import Foundation
import XCTest

@testable import AmbarCore

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

    /// Reads the rows of `ids` as a ledger follower does: through the ledger's head as it was
    /// before the read.
    private func prefetch(_ ids: Set<ManagedObjectID>) throws -> PrefetchedRows {
        try coordinator.prefetchRows(ids, readThrough: try coordinator.currentHistoryToken())
    }

    /// Another context's save inserting "Arrived" (salary 20), not merged yet.
    private func insertArrived() throws -> DidSaveNotification {
        try save("writer") { writer in
            let arrived = try writer.insert(Employee.self)
            arrived.name = "Arrived"
            arrived.salary = 20
        }
    }

    /// A viewer whose results controller lists every employee by salary.
    private func viewerWithController() throws -> (ManagedObjectContext, FetchedResultsController<Employee>) {
        let viewer = privateContext("viewer")
        let controller: FetchedResultsController<Employee> = try viewer.performAndWait {
            let controller = FetchedResultsController(
                fetchRequest: FetchRequest<Employee>(sortDescriptors: [Key<Double>("salary").sorted()]), context: viewer)
            try controller.performFetch()
            return controller
        }
        return (viewer, controller)
    }

    func testTheRowsReadAheadServeTheMergeAndTheResultsController() throws {
        let kept = try seedEmployee("Kept", salary: 10)
        let (viewer, controller) = try viewerWithController()
        let first = try save("writer") { writer in
            (try writer.existingObject(with: kept) as? Employee)?.salary = 50
            let arrived = try writer.insert(Employee.self)
            arrived.name = "Arrived"
            arrived.salary = 20
        }
        let rows = try prefetch(first.inserted.union(first.updated))
        XCTAssertEqual(rows.count, 2)
        // A later save, not merged yet: the merge must show the state of the rows it was given.
        let second = try save("later") { later in
            for employee in try later.fetch(FetchRequest<Employee>()) {
                employee.name += " later"
                employee.salary += 100
            }
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
        let rows = try prefetch(theirs.updated)
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
        let rows = try prefetch(update.updated)
        let change = viewer.mergeChanges(fromContextDidSave: update, prefetched: rows)
        XCTAssertEqual(change.invalidated, [id])
        viewer.performAndWait { XCTAssertNil(employee.managedObjectContext) }
    }

    /// An object this process saved after the rows were read, merged before them while the
    /// context did not hold it: the results controller loads it from the store, not from the
    /// older row (the soak's importers, which also view, found the stale row).
    func testAnObjectSavedHereAfterTheReadIsLoadedFromTheStore() throws {
        let (viewer, controller) = try viewerWithController()
        let theirs = try insertArrived()
        let rows = try prefetch(theirs.inserted)
        let id = try XCTUnwrap(theirs.inserted.first)
        let mine = try save("importer") { importer in (try importer.existingObject(with: id) as? Employee)?.salary = 30 }
        viewer.mergeChanges(fromContextDidSave: mine)

        _ = viewer.mergeChanges(fromContextDidSave: theirs, prefetched: rows)
        viewer.performAndWait {
            XCTAssertEqual(controller.fetchedObjects.map(\.salary), [30], "the row read before this process's save must not be used")
        }
    }

    /// The same for an object this process deleted after the read: it does not come back.
    func testAnObjectDeletedHereAfterTheReadDoesNotComeBack() throws {
        let (viewer, controller) = try viewerWithController()
        let theirs = try insertArrived()
        let rows = try prefetch(theirs.inserted)
        let id = try XCTUnwrap(theirs.inserted.first)
        let mine = try save("deleter") { deleter in try deleter.delete(try deleter.existingObject(with: id)) }
        viewer.mergeChanges(fromContextDidSave: mine)

        _ = viewer.mergeChanges(fromContextDidSave: theirs, prefetched: rows)
        viewer.performAndWait { XCTAssertEqual(controller.fetchedObjects.map(\.name), []) }
    }

    /// Rows read after this process's save reflect it, and serve the merge.
    func testRowsReadAfterALocalSaveStillServe() throws {
        let (viewer, controller) = try viewerWithController()
        let theirs = try insertArrived()
        let id = try XCTUnwrap(theirs.inserted.first)
        let mine = try save("importer") { importer in (try importer.existingObject(with: id) as? Employee)?.salary = 30 }
        viewer.mergeChanges(fromContextDidSave: mine)
        var rows = try prefetch(theirs.inserted)
        var log = MergedSaveLog()
        log.record(mine)
        log.screen(&rows)
        XCTAssertEqual(rows.count, 1, "a save the rows were read through does not screen them")

        _ = viewer.mergeChanges(fromContextDidSave: theirs, prefetched: rows)
        viewer.performAndWait { XCTAssertEqual(controller.fetchedObjects.map(\.salary), [30]) }
    }
}
