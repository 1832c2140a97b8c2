import AmbarModels
import Foundation
import XCTest

/// The engine's main behaviours on declared classes, beside the suites that run them on described
/// entities: the five merge policies on a conflict, and a results controller's diffs. (Saving,
/// relationships, cascade and uniqueness: ``DeclaredModelTests``; merges across processes:
/// `TrackerExampleTests`, whose two processes are written with `@Model`.)
final class DeclaredEngineTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    override func setUpWithError() throws {
        try super.setUpWithError()
        model = try Tracker.model()
        coordinator = try PersistentStoreCoordinator(model: model, store: try store("tracker.sqlite"))
    }

    /// A saved task, then two contexts that each change it: `theirs` changes title and priority
    /// and saves; `mine` changes priority and done and saves with `policy`. Returns the stored
    /// task and what `mine` holds after its save (or the error).
    private func conflict(_ policy: MergePolicy) throws -> (stored: String, error: AmbarError?) {
        let seed = privateContext("seed")
        let id: ManagedObjectID = try seed.performAndWait {
            let task = Tracker.Task(title: "Paint", priority: 1)
            try seed.insert(task)
            try seed.save()
            return task.objectID
        }
        let mine = privateContext("mine")
        let theirs = privateContext("theirs")
        mine.mergePolicy = policy
        let task: Tracker.Task = try mine.performAndWait { try XCTUnwrap(try mine.existingObject(with: id) as? Tracker.Task) }
        try theirs.performAndWait {
            let their = try XCTUnwrap(try theirs.existingObject(with: id) as? Tracker.Task)
            their.title = "Paint twice"
            their.priority = 5
            try theirs.save()
        }
        var failure: AmbarError?
        mine.performAndWait {
            task.priority = 9
            task.done = true
            do throws(AmbarError) { try mine.save() } catch { failure = error }
        }
        let reader = privateContext("reader")
        let stored = try reader.performAndWait { () throws -> String in
            let t = try XCTUnwrap(try reader.existingObject(with: id) as? Tracker.Task)
            return "\(t.title) \(t.priority) \(t.done)"
        }
        return (stored, failure)
    }

    func testTheFiveMergePoliciesOnDeclaredClasses() throws {
        let error = try conflict(.error)
        guard case .mergeConflict? = error.error else { return XCTFail("expected a merge conflict, got \(String(describing: error.error))") }
        XCTAssertEqual(error.stored, "Paint twice 5 false", "nothing of mine was written")

        let resolved: [(MergePolicy, stored: String, why: String)] = [
            (.mergeByPropertyStoreTrump, "Paint twice 5 true", "their priority wins; my done is kept"),
            (.mergeByPropertyObjectTrump, "Paint twice 9 true", "my priority and done win; their title is kept"),
            (.overwrite, "Paint 9 true", "my whole object is written"),
            (.rollback, "Paint twice 5 false", "the store's object stays"),
        ]
        for (policy, expected, why) in resolved {
            let outcome = try conflict(policy)
            XCTAssertNil(outcome.error, "\(policy)")
            XCTAssertEqual(outcome.stored, expected, "\(policy): \(why)")
        }
    }

    func testAResultsControllerReportsItsDiffsOnDeclaredClasses() throws {
        let context = privateContext("viewer")
        try context.performAndWait {
            let home = Tracker.Project(name: "Home")
            for (title, priority) in [("Paint", 2), ("Fix", 1), ("Sweep", 3)] {
                try context.insert(Tracker.Task(title: title, priority: priority, project: home))
            }
            try context.save()
            let controller = try FetchedResultsController<Tracker.Task>(
                predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.priority), SortDescriptor(\.title)], context: context)
            var reported: [[String]] = []
            controller.onChange = { changes in
                reported.append(
                    changes.map { change in
                        switch change {
                        case .insert(_, let at): return "insert \(at.row)"
                        case .delete(_, let at): return "delete \(at.row)"
                        case .move(_, let from, let to): return "move \(from.row)->\(to.row)"
                        case .update(_, let at): return "update \(at.row)"
                        case .insertSection, .deleteSection: return "section"
                        }
                    })
            }
            try controller.performFetch()
            XCTAssertEqual(controller.fetchedObjects.map(\.title), ["Fix", "Paint", "Sweep"])

            try context.insert(Tracker.Task(title: "Call", priority: 0))
            context.processPendingChanges()
            let fix = controller.fetchedObjects[1]
            fix.priority = 4  // moves to the end
            context.processPendingChanges()
            controller.fetchedObjects[0].title = "Call back"  // stays first
            context.processPendingChanges()
            controller.fetchedObjects[1].done = true  // Paint leaves the results
            context.processPendingChanges()
            try context.delete(fix)
            context.processPendingChanges()

            XCTAssertEqual(reported, [["insert 0"], ["move 1->3"], ["update 0"], ["delete 1"], ["delete 2"]])
            XCTAssertEqual(controller.fetchedObjects.map(\.title), ["Call back", "Sweep"])
            XCTAssertFalse(reported.joined().contains("section"), "a controller without sections reports rows only")
        }
    }
}
