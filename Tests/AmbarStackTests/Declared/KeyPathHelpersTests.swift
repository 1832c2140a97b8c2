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
            XCTAssertEqual(
                try Tracker.Task.fetch(in: context, predicate: #Predicate { $0.priority == 1 }, sortBy: [SortDescriptor(\.title)]).map(\.title),
                ["Call", "Fix"])
            XCTAssertEqual(try Tracker.Task.find(in: context, predicate: #Predicate { $0.title == "Urgent" }), urgent)
            XCTAssertEqual(try Tracker.Task.findOrFetch(in: context, predicate: #Predicate { $0.title == "Sweep" })?.title, "Sweep")
            XCTAssertEqual(try Tracker.Task.delete(in: context, predicate: #Predicate { $0.done }), 1)
            XCTAssertThrowsError(try Tracker.Task.count(in: context, predicate: #Predicate { $0.title.count > 3 })) { error in
                guard case AmbarError.invalidPredicate? = error as? AmbarError else { return XCTFail("\(error)") }
            }
        }
    }
}

/// A declared record for the seed libraries' APIs (Y—Persistence's `DataRecord`,
/// BBLCoreDataKit's `StringIdentified`).
@Model final class NoteRecord: ManagedObject, DataRecord, StringIdentified {
    @Attribute(.unique) var uid: String = ""
    var idString: String = ""
    var pinned: Bool = false
}

/// The seed libraries' predicate-taking APIs take `#Predicate` for declared classes.
final class KeyPathSeedHelpersTests: StoreTestCase {
    func testPersistenceManagerDeleteAndCollectionControllersTakeKeyPathPredicates() async throws {
        let manager = PersistenceManager(model: .model(try ManagedObjectModel(declaring: [NoteRecord.self])), storeType: .inMemory)
        try await manager.load()
        let context = try manager.workerContext
        try context.performAndWait {
            for (i, pinned) in [true, false, true, false].enumerated() {
                let note = NoteRecord()
                note.uid = "n\(i)"
                note.idString = "n\(i)"
                note.pinned = pinned
                try context.insert(note)
            }
            try context.save()
            let collection = ObjectCollection<NoteRecord>(context: context)
            let controller = try collection.frc(predicate: #Predicate { $0.pinned }, sortBy: [SortDescriptor(\.uid, order: .reverse)])
            try controller.performFetch()
            XCTAssertEqual(controller.fetchedObjects.map(\.uid), ["n2", "n0"])
        }
        XCTAssertEqual(try manager.delete(entity: NoteRecord.self, predicate: #Predicate { !$0.pinned }), 2)
        XCTAssertEqual(try context.performAndWait { try NoteRecord.count(in: context, predicate: #Predicate { $0.uid != "" }) }, 2)
    }
}
