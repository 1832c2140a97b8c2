import AmbarModels
import AmbarTestSupport
import Foundation
import XCTest

/// The model of the documentation's examples (the landing page declares it), in a namespace so
/// that its `Project` does not meet the test model's.
enum DocumentationModel {
    @Model final class Project: ManagedObject {
        @Attribute(.unique) var name: String
        @Relationship(deleteRule: .cascade, inverse: \TaskItem.project) var tasks: Set<TaskItem>
    }

    @Model(name: "Task") final class TaskItem: ManagedObject {
        var title: String
        var done: Bool = false
        var priority: Int = 0
        var project: Project?
    }
}

/// The code examples of the doc comments, run as they are written there (the lines between
/// `// example` and `// end of example` are copied from the comment named above them), so that
/// an example that no longer compiles or no longer does what it says fails here.
final class DocumentationExamplesTests: XCTestCase {
    typealias Project = DocumentationModel.Project
    typealias TaskItem = DocumentationModel.TaskItem

    var directory: TemporaryDirectory!
    var coordinator: PersistentStoreCoordinator!
    var importer: ManagedObjectContext!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        // PersistentStoreCoordinator: example
        let coordinator = try PersistentStoreCoordinator(
            model: try ManagedObjectModel(declaring: [Project.self]),
            store: .sqlite(directory.url.appendingPathComponent("tracker.sqlite")))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "importer")
        // end of example
        self.coordinator = coordinator
        importer = context
    }

    override func tearDown() {
        importer = nil
        coordinator = nil
        directory = nil
    }

    /// Three tasks, priorities 1, 5 and 3, the second done.
    private func insertTasks() throws {
        try importer.performAndWait { () throws(AmbarError) in
            for (title, priority, done) in [("Paint", 1, false), ("Mow", 5, true), ("Fix", 3, false)] {
                let task = try importer.insert(TaskItem.self)
                task.title = title
                task.priority = priority
                task.done = done
            }
            try importer.save()
        }
    }

    func testTheCoordinatorExampleCountsOpenTasks() throws {
        try insertTasks()
        let context = importer!
        // PersistentStoreCoordinator: example
        let open = try context.performAndWait { () throws(AmbarError) in
            try context.count(for: try FetchRequest<TaskItem>(format: "done == NO"))
        }
        // end of example
        XCTAssertEqual(open, 2)
    }

    func testTheFetchRequestExamplesAgree() throws {
        try insertTasks()
        let context = importer!
        try context.performAndWait { () throws(AmbarError) in
            // FetchRequest: example
            var request = try FetchRequest<TaskItem>(predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.priority, order: .reverse)])
            request.fetchLimit = 10
            let top = try context.fetch(request)
            // The same request with typed keys, and with an NSPredicate format string:
            let byKey = FetchRequest<TaskItem>(predicate: Key<Bool>("done") == false, sortDescriptors: [Key<Int>("priority").sorted(ascending: false)])
            let byFormat = try FetchRequest<TaskItem>(format: "done == NO", sortDescriptors: [Key<Int>("priority").sorted(ascending: false)])
            // end of example
            XCTAssertEqual(top.map(\.title), ["Fix", "Paint"])
            XCTAssertEqual(try context.fetch(byKey).map(\.title), ["Fix", "Paint"])
            XCTAssertEqual(try context.fetch(byFormat).map(\.title), ["Fix", "Paint"])
        }
    }

    func testTheHistoryExampleListsEachTransactionOnce() throws {
        // PersistentStoreCoordinator.history(after:limit:): example
        var seen = try coordinator.currentHistoryToken()
        // … later, in this process or another:
        for transaction in try coordinator.history(after: seen) {
            print(transaction.token, transaction.author ?? "-", transaction.inserted.count, "inserted")
            seen = transaction.token
        }
        // end of example
        XCTAssertEqual(seen, 0, "an empty store's ledger")
        try insertTasks()
        let transactions = try coordinator.history(after: seen)
        XCTAssertEqual(transactions.count, 1)
        XCTAssertEqual(transactions.first?.inserted.count, 3)
    }

    func testTheBatchExamplesWriteTheStoreAndMerge() throws {
        try insertTasks()
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "other")
        let held = try other.performAndWait { () throws(AmbarError) in try other.fetch(FetchRequest<TaskItem>(format: "title == 'Fix'")) }
        XCTAssertEqual(held.count, 1)
        let importer = self.importer!
        try importer.performAndWait { () throws(AmbarError) in
            // ManagedObjectContext.batchInsert(entityName:rows:): example
            let result = try importer.batchInsert(
                entityName: "Task",
                rows: [
                    ["title": .string("Water the plants"), "priority": .integer(2), "done": .bool(false)],
                    ["title": .string("Fix the gate"), "priority": .integer(4), "done": .bool(false)],
                ])
            // end of example
            XCTAssertEqual(result.objectIDs.count, 2)
            // ManagedObjectContext.batchUpdate(_:set:): example
            let urgent = try FetchRequest<TaskItem>(predicate: #Predicate { $0.priority >= 3 })
            let updated = try importer.batchUpdate(urgent, set: ["done": .bool(true)])
            // Contexts that hold those objects take the change when they merge it:
            other.performAndWait { _ = other.mergeChanges(fromContextDidSave: updated.notification(.updated)) }
            // end of example
            XCTAssertEqual(updated.objectIDs.count, 3, "Mow, Fix and Fix the gate")
        }
        try other.performAndWait { () throws(AmbarError) in
            XCTAssertEqual(held.first?.done, true, "the held object (Fix, open before) took the batch update")
            XCTAssertEqual(try other.count(for: FetchRequest<TaskItem>(format: "done == YES")), 3)
        }
    }

    func testTheMonitorExampleReportsInsertsOfOpenTasks() throws {
        let context = importer!
        var reports: [String] = []
        try context.performAndWait { () throws(AmbarError) in
            // EntityMonitor: example
            let monitor = try EntityMonitor<TaskItem>(context: context, predicate: #Predicate { !$0.done }) { inserted, updated, deleted in
                print("\(inserted.count) new, \(updated.count) changed, \(deleted.count) gone")
                // end of example
                reports.append("\(inserted.count) new, \(updated.count) changed, \(deleted.count) gone")
            }
            let open = try context.insert(TaskItem.self)
            open.title = "Open"
            let done = try context.insert(TaskItem.self)
            done.title = "Done"
            done.done = true
            try context.save()
            withExtendedLifetime(monitor) {}
        }
        XCTAssertEqual(reports, ["1 new, 0 changed, 0 gone"], "the done task is filtered out")
    }

    func testTheErrorExampleCatchesAConstraintViolationByCase() throws {
        let importer = self.importer!
        var caught: String?
        try importer.performAndWait { () throws(AmbarError) in
            let home = try importer.insert(Project.self)
            home.name = "Home"
            try importer.save()
            let twin = try importer.insert(Project.self)
            twin.name = "Home"
            // AmbarError: example
            do throws(AmbarError) {
                try importer.save()
            } catch .constraintViolation(let entity, let attributes, _, let existing) {
                // Another object holds the unique value; nothing was written.
                print("\(entity).\(attributes) is taken by \(existing?.uriString ?? "an object of this save")")
                // end of example
                caught = "\(entity).\(attributes) taken by \(existing == home.objectID ? "home" : "?")"
            } catch {
                print(error)  // what went wrong, what state remains, what to do
            }
        }
        XCTAssertEqual(caught, "Project.[\"name\"] taken by home")
    }

    func testTheObjectIDExampleFindsTheSameObjectFromItsURI() throws {
        try insertTasks()
        let context = importer!
        let coordinator = self.coordinator!
        try context.performAndWait { () throws(AmbarError) in
            guard let task = try context.fetch(FetchRequest<TaskItem>(format: "title == 'Fix'")).first else { return XCTFail("no task") }
            // ManagedObjectID: example
            let uri = task.objectID.uriRepresentation  // keep it, or pass it to another process
            let id = try coordinator.managedObjectID(forURIRepresentation: uri)
            let same = try context.existingObject(with: id) as? TaskItem
            // end of example
            XCTAssertTrue(same === task)
        }
    }
}
