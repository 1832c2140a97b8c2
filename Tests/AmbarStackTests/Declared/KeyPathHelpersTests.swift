import AmbarModels
import Foundation
import XCTest

/// The helpers that take builder predicates take `#Predicate` and `SortDescriptor` too: results
/// controllers, entity monitors and the typed fetch, count, find and delete helpers.
final class KeyPathHelpersTests: StoreTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        model = try Tracker.model()
        coordinator = try PersistentStoreCoordinator(model: model, store: try store("tracker.sqlite"))
    }

    func testResultsControllersMonitorsAndHelpersTakeKeyPathPredicates() throws {
        let context = privateContext("writer")
        try context.performAndWait {
            let home = Tracker.Project(name: "Home")
            for (i, title) in ["Paint", "Fix", "Sweep", "Call"].enumerated() {
                let task = Tracker.Task(title: title, priority: i % 2, project: home)
                task.done = title == "Fix"
                try context.insert(task)
            }
            try context.save()

            let controller = try FetchedResultsController<Tracker.Task>(
                predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.priority), SortDescriptor(\.title)], context: context)
            try controller.performFetch()
            XCTAssertEqual(controller.fetchedObjects.map(\.title), ["Paint", "Sweep", "Call"])
            XCTAssertThrowsError(try FetchedResultsController<Tracker.Task>(sortBy: [], context: context))

            let reported = Collector<String>()
            let monitor = try EntityMonitor<Tracker.Task>(context: context, predicate: #Predicate { $0.priority > 0 }) { inserted, updated, _ in
                for task in inserted.union(updated) { reported.append(task.title) }
            }
            let urgent = Tracker.Task(title: "Urgent", priority: 3)
            try context.insert(urgent)
            try context.insert(Tracker.Task(title: "Later"))
            context.processPendingChanges()
            XCTAssertEqual(reported.all, ["Urgent"], "the monitor reports what its predicate matches")
            monitor.cancel()

            XCTAssertEqual(try Tracker.Task.count(in: context, predicate: #Predicate { $0.project?.name == "Home" }), 4)
            XCTAssertEqual(try Tracker.Task.fetch(in: context, predicate: #Predicate { $0.priority == 1 }, sortBy: [SortDescriptor(\.title)]).map(\.title),
                           ["Call", "Fix"])
            XCTAssertEqual(try Tracker.Task.find(in: context, predicate: #Predicate { $0.title == "Urgent" }), urgent)
            XCTAssertEqual(try Tracker.Task.findOrFetch(in: context, predicate: #Predicate { $0.title == "Sweep" })?.title, "Sweep")
            XCTAssertEqual(try Tracker.Task.delete(in: context, predicate: #Predicate { $0.done }), 1)
            XCTAssertThrowsError(try Tracker.Task.count(in: context, predicate: #Predicate { $0.priority == $0.priority })) { error in
                guard case AmbarError.invalidPredicate? = error as? AmbarError else { return XCTFail("\(error)") }
            }
        }
    }
}
