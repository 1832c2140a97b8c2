import AmbarModels
import Foundation
import XCTest

/// Fetch requests from `#Predicate` and `SortDescriptor` on declared classes: what the store
/// returns, what a context with unsaved changes evaluates in memory, and what Foundation itself
/// evaluates on the same objects all agree; what a store query cannot state is a typed error that
/// names it.
final class KeyPathQueryTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    override func setUpWithError() throws {
        try super.setUpWithError()
        model = try Tracker.model()
        coordinator = try PersistentStoreCoordinator(model: model, store: try store("queries.sqlite"))
        let seed = privateContext("seed")
        try seed.performAndWait {
            var projects: [String: Tracker.Project] = [:]
            for name in ["Home", "Work", "Garden"] {
                let project = try seed.insert(Tracker.Project.self)
                project.name = name
                projects[name] = project
            }
            let rows: [(String, Int, Bool, String?, Bool)] = [
                ("Paint the fence", 2, false, "Home", true), ("Plan the quarter", 3, false, "Work", false),
                ("Answer mail", 1, true, "Work", true), ("Prune the roses", 2, true, "Garden", false),
                ("Buy bread", 1, false, nil, false), ("Call the plumber", 3, false, "Home", true),
            ]
            for (title, priority, done, project, due) in rows {
                let task = try seed.insert(Tracker.Task.self)
                task.title = title
                task.priority = priority
                task.done = done
                task.project = project.flatMap { projects[$0] }
                task.due = due ? Date(timeIntervalSince1970: 86_400 * Double(priority)) : nil
            }
            try seed.save()
        }
    }

    /// Fetches with `predicate` from the store and, after an unsaved change, in memory; both must
    /// give what Foundation's own evaluation gives.
    private func assertAgrees<T: DeclaredModel>(_ predicate: Predicate<T>, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let context = privateContext("check")
        try context.performAndWait {
            let request = try FetchRequest<T>(predicate: predicate)
            func expected() throws -> Set<ManagedObjectID> {
                Set(try context.fetch(FetchRequest<T>()).filter { try predicate.evaluate($0) }.map(\.objectID))
            }
            let stored = Set(try context.fetch(request).map(\.objectID))
            XCTAssertEqual(stored, try expected(), "\(label): the store", file: file, line: line)
            if label.hasPrefix("some") { XCTAssertFalse(stored.isEmpty, "\(label) matches nothing: the case tests little", file: file, line: line) }

            // Unsaved changes are evaluated in memory.
            for task in try context.fetch(FetchRequest<Tracker.Task>()) {
                task.done.toggle()
                task.priority = 4 - task.priority
                if task.title.hasPrefix("P") { task.project = nil }
            }
            let pending = Set(try context.fetch(request).map(\.objectID))
            XCTAssertEqual(pending, try expected(), "\(label): in memory, with unsaved changes", file: file, line: line)
            try context.rollback()
        }
    }

    func testPredicatesAgreeWithFoundationsEvaluation() throws {
        let cutoff = 2
        try assertAgrees(#Predicate<Tracker.Task> { !$0.done }, "some open")
        try assertAgrees(#Predicate<Tracker.Task> { $0.done }, "some done")
        try assertAgrees(#Predicate<Tracker.Task> { $0.priority >= 2 && $0.title.contains("the") }, "some priority and text")
        try assertAgrees(#Predicate<Tracker.Task> { $0.priority > cutoff || $0.done == true }, "some captured value")
        try assertAgrees(#Predicate<Tracker.Task> { 2 < $0.priority }, "some mirrored")
        try assertAgrees(#Predicate<Tracker.Task> { $0.project?.name == "Home" }, "some through a to-one")
        try assertAgrees(#Predicate<Tracker.Task> { $0.project == nil }, "some without project")
        try assertAgrees(#Predicate<Tracker.Task> { $0.project != nil && $0.due == nil }, "some with project, no due date")
        try assertAgrees(#Predicate<Tracker.Task> { ["Buy bread", "Answer mail"].contains($0.title) }, "some in a list")
        try assertAgrees(#Predicate<Tracker.Task> { (1...2).contains($0.priority) }, "some in a closed range")
        try assertAgrees(#Predicate<Tracker.Task> { (2..<3).contains($0.priority) }, "some in a range")
        try assertAgrees(#Predicate<Tracker.Task> { $0.title.starts(with: "P") }, "some prefix")
        try assertAgrees(#Predicate<Tracker.Task> { !($0.priority != 3) }, "some negated")
        try assertAgrees(#Predicate<Tracker.Project> { $0.tasks.count >= 2 }, "some to-many count")
        try assertAgrees(#Predicate<Tracker.Project> { $0.tasks.isEmpty }, "empty to-many")
        try assertAgrees(#Predicate<Tracker.Project> { $0.tasks.contains { $0.done } }, "some to-many contains(where:)")
        try assertAgrees(#Predicate<Tracker.Project> { $0.tasks.allSatisfy { !$0.done } }, "some to-many allSatisfy")
        try assertAgrees(#Predicate<Tracker.Project> { $0.tasks.filter { $0.priority >= 2 }.count == 2 }, "some filtered count (SUBQUERY)")
        try assertAgrees(#Predicate<Tracker.Project> { 1 <= $0.tasks.filter { !$0.done && $0.priority < 3 }.count }, "some filtered count, value first")
        try assertAgrees(#Predicate<Tracker.Project> { $0.tasks.filter { $0.done }.isEmpty }, "some filtered isEmpty")
    }

    func testTheCompiledPredicateIsTheBuildersOne() throws {
        XCTAssertEqual(
            try ObjectPredicate(#Predicate<Tracker.Task> { $0.priority >= 2 && $0.title.starts(with: "P") }),
            Key<Int>("priority") >= 2 && Key<String>("title").beginsWith("P"))
        XCTAssertEqual(try ObjectPredicate(#Predicate<Tracker.Task> { $0.project?.name == "Home" }), Key<String>("project.name") == "Home")
        XCTAssertEqual(
            try ObjectPredicate(#Predicate<Tracker.Project> { $0.tasks.filter { $0.priority > 1 }.count >= 2 }),
            ToManyKey("tasks").count(where: Key<Int>("priority") > 1, .greaterOrEqual, 2))
    }

    func testSortDescriptorsOrderLikeKeys() throws {
        let context = privateContext()
        try context.performAndWait {
            let byKeys = try context.fetch(
                FetchRequest<Tracker.Task>(
                    sortDescriptors: [Key<Int>("priority").sorted(ascending: false), Key<String>("title").sorted()]))
            let bySortDescriptors = try context.fetch(
                try FetchRequest<Tracker.Task>(
                    sortBy: [SortDescriptor(\.priority, order: .reverse), SortDescriptor(\.title)]))
            XCTAssertEqual(bySortDescriptors.map(\.title), byKeys.map(\.title))
            XCTAssertEqual(bySortDescriptors.first?.priority, 3)
        }
    }

    func testWhatAStoreQueryCannotStateIsATypedErrorThatNamesIt() throws {
        func message(_ body: () throws -> Any) -> String {
            do {
                _ = try body()
                return "no error"
            } catch let error as AmbarError {
                guard case .invalidPredicate(let text) = error else { return "other error: \(error)" }
                return text
            } catch {
                return "not an AmbarError: \(error)"
            }
        }
        // Two properties compared are a key-path comparison now; a property of a String is not stored.
        XCTAssertEqual(try ObjectPredicate(#Predicate<Tracker.Task> { $0.title == $0.title }), .keyComparison(.key("title"), .equal, .key("title")))
        let notStored = message { try ObjectPredicate(#Predicate<Tracker.Task> { $0.title.count > 3 }) }
        XCTAssertTrue(notStored.contains("not a declared model"), notStored)
        let arithmetic = message { try ObjectPredicate(#Predicate<Tracker.Task> { $0.priority + 1 > 3 }) }
        XCTAssertTrue(arithmetic.contains("Arithmetic"), arithmetic)
        let transient = message { try ObjectPredicate(#Predicate<Tracker.Task> { $0.scratch > 1 }) }
        XCTAssertTrue(transient.contains("scratch") || transient.contains("stored property"), transient)
        let unsortable = message { try ObjectSortDescriptor(SortDescriptor(\Tracker.Task.scratch)) }
        XCTAssertTrue(unsortable.contains("scratch"), unsortable)
    }
}
