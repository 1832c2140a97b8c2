import AmbarModels
import Foundation
import XCTest

/// Objects of declared classes made with their own initializers, outside any context, then
/// inserted (as in SwiftData): their values and relationships go in with them, inverses follow,
/// and what cannot be inserted is refused before anything changes.
final class ObjectsMadeOutsideAContextTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    override func setUpWithError() throws {
        try super.setUpWithError()
        model = try ManagedObjectModel(declaring: [Tracker.Project.self, Stamped.self])
        coordinator = try PersistentStoreCoordinator(model: model, store: try store("tracker.sqlite"))
    }

    /// The tasks' titles, priorities and project names as a fresh context reads them.
    private func storedTasks() throws -> [String] {
        let reader = privateContext("reader")
        return try reader.performAndWait {
            try reader.fetch(try FetchRequest<Tracker.Task>(sortBy: [SortDescriptor(\.title)])).map {
                "\($0.title) \($0.priority) \($0.done) \($0.project?.name ?? "-")"
            }
        }
    }

    func testAnObjectMadeWithItsInitializerIsInsertedAndSaved() throws {
        let context = privateContext("writer")
        try context.performAndWait {
            let project = Tracker.Project(name: "Home")
            XCTAssertNil(project.managedObjectContext)
            XCTAssertEqual(project.name, "Home", "an object outside a context holds its values")
            XCTAssertFalse(project.isInserted)
            try context.insert(project)
            XCTAssertTrue(project.isInserted)
            XCTAssertTrue(project.managedObjectContext === context)
            XCTAssertEqual(project.name, "Home")
            let task = Tracker.Task(title: "Paint", priority: 2)
            XCTAssertEqual(task.done, false, "the declared default")
            try context.insert(task)
            task.project = project
            try context.save()
            XCTAssertFalse(project.objectID.isTemporaryID)
        }
        XCTAssertEqual(try storedTasks(), ["Paint 2 false Home"])
    }

    func testRelatedObjectsGoInWithItAndInversesFollow() throws {
        let context = privateContext("writer")
        try context.performAndWait {
            let home = Tracker.Project(name: "Home")
            let paint = Tracker.Task(title: "Paint", project: home)
            let fix = Tracker.Task(title: "Fix", priority: 1)
            home.tasks.insert(fix)
            XCTAssertTrue(paint.project === home, "an object outside a context holds its relationships")
            try context.insert(paint)
            XCTAssertTrue(home.isInserted, "the project paint leads to went in with it")
            XCTAssertTrue(fix.isInserted, "and the task the project leads to")
            XCTAssertEqual(Set(home.tasks.map(\.title)), ["Paint", "Fix"], "inverses follow once inserted")
            XCTAssertTrue(fix.project === home)
            XCTAssertEqual(context.insertedObjects.count, 3)
            try context.save()
        }
        XCTAssertEqual(try storedTasks(), ["Fix 1 false Home", "Paint 0 false Home"])
    }

    func testSettingARelationshipToAnObjectOutsideAContextInsertsIt() throws {
        let context = privateContext("writer")
        try context.performAndWait {
            let home = try context.insert(Tracker.Project.self)
            home.name = "Home"
            let task = Tracker.Task(title: "Sweep")
            home.tasks.insert(task)
            XCTAssertTrue(task.isInserted)
            XCTAssertTrue(task.project === home)
            let other = Tracker.Task(title: "Dust")
            other.project = home  // set while outside: applied when inserted
            XCTAssertFalse(other.isInserted)
            try context.insert(other)
            XCTAssertEqual(home.tasks.count, 2)
            try context.save()
        }
        XCTAssertEqual(try storedTasks(), ["Dust 0 false Home", "Sweep 0 false Home"])
    }

    func testWhatCannotBeInsertedIsRefusedBeforeAnythingChanges() throws {
        let mine = privateContext("mine")
        let theirs = privateContext("theirs")
        let foreign: Tracker.Project = try theirs.performAndWait {
            let project = try theirs.insert(Tracker.Project.self)
            project.name = "Theirs"
            return project
        }
        try mine.performAndWait {
            let task = Tracker.Task(title: "Orphan")
            let home = Tracker.Project(name: "Home")
            home.tasks.insert(task)
            task.project = foreign
            XCTAssertThrowsError(try mine.insert(home)) { error in
                guard case AmbarError.foreignObject? = error as? AmbarError else { return XCTFail("\(error)") }
            }
            XCTAssertEqual(mine.insertedObjects.count, 0, "nothing was inserted")
            XCTAssertNil(home.managedObjectContext)

            XCTAssertThrowsError(try mine.insert(foreign)) { error in
                guard case AmbarError.foreignObject? = error as? AmbarError else { return XCTFail("\(error)") }
            }
            // A class that does not declare its entity: made, but not insertable, with a clear error.
            XCTAssertThrowsError(try mine.insert(Employee())) { error in
                guard case AmbarError.invalidModel(let message)? = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("context.insert(Employee.self)"), message)
            }
            let twice = Tracker.Project(name: "Twice")
            try mine.insert(twice)
            try mine.insert(twice)
            XCTAssertEqual(mine.insertedObjects.count, 1, "inserting an object of this context again does nothing")
        }
    }

    /// A class that overrides `awakeFromInsert` gets it at insert; the values the object was
    /// given apply after it.
    func testTheValuesGivenApplyAfterAwakeFromInsert() throws {
        let context = privateContext("writer")
        try context.performAndWait {
            let made = Stamped()
            made.label = "given"
            try context.insert(made)
            XCTAssertEqual(made.label, "given")
            XCTAssertEqual(made.stamp, "awake", "awakeFromInsert ran")
            let byContext = try context.insert(Stamped.self)
            XCTAssertEqual(byContext.label, "awake")
        }
    }

    /// Inserted in another order than they were made, objects are still written in the order of
    /// their IDs (the order they were made in): the first made gets the first key. An insert
    /// taken back (deleted before the save) is not written, and the others keep that order.
    func testInsertsAreWrittenInTheOrderOfTheirIDsWhateverTheOrderOfInsertion() throws {
        let context = privateContext("writer")
        let keys = try context.performAndWait { () throws -> [String: Int64] in
            let first = Stamped()
            let second = Stamped()
            let third = Stamped()
            for (object, stamp) in [(first, "first"), (second, "second"), (third, "third")] { object.stamp = stamp }
            try context.insert(third)
            try context.insert(first)
            let dropped = try context.insert(Stamped.self)
            dropped.stamp = "dropped"
            try context.insert(second)
            try context.delete(dropped)
            let last = try context.insert(Stamped.self)
            last.stamp = "last"
            try context.save()
            var keys: [String: Int64] = [:]
            for object in [first, second, third, last] { keys[object.stamp] = object.objectID.primaryKey }
            return keys
        }
        let order = keys.sorted { $0.value < $1.value }.map(\.key)
        XCTAssertEqual(order, ["first", "second", "third", "last"], "keys in the order the objects were made: \(keys)")
        let reader = privateContext("reader")
        let stored = try reader.performAndWait {
            try reader.fetch(try FetchRequest<Stamped>(sortBy: [SortDescriptor(\.stamp)])).map(\.stamp)
        }
        XCTAssertEqual(stored, ["first", "last", "second", "third"], "the dropped insert was not written")
    }

    /// Objects inserted by the context, one after another, are written in that order; so are
    /// they after an earlier save in the same context.
    func testInsertsOfOneContextAreWrittenInTheOrderOfInsertion() throws {
        let context = privateContext("writer")
        let keys = try context.performAndWait { () throws -> [Int64] in
            var keys: [Int64] = []
            for batch in 0..<2 {
                let objects = try (0..<5).map { i in
                    let object = try context.insert(Stamped.self)
                    object.stamp = "\(batch)-\(i)"
                    return object
                }
                try context.save()
                keys += objects.compactMap(\.objectID.primaryKey)
            }
            return keys
        }
        XCTAssertEqual(keys.count, 10)
        XCTAssertEqual(keys, keys.sorted(), "keys follow the order of insertion")
        XCTAssertEqual(Set(keys).count, 10)
    }
}

/// A declared class that sets values in `awakeFromInsert`.
@Model final class Stamped: ManagedObject {
    var label: String = ""
    var stamp: String = ""

    override func awakeFromInsert() {
        super.awakeFromInsert()
        label = "awake"
        stamp = "awake"
    }
}

/// A declared class whose entity is named otherwise (`@Model(name:)`).
@Model(name: "Label") final class LabelItem: ManagedObject {
    var text: String = ""
}

/// Class and entity names may differ.
final class DeclaredEntityNameTests: StoreTestCase {
    func testAClassDeclaresAnEntityOfAnotherName() throws {
        model = try ManagedObjectModel(declaring: [LabelItem.self])
        coordinator = try PersistentStoreCoordinator(model: model, store: try store("labels.sqlite"))
        XCTAssertNotNil(model.entity(named: "Label"))
        XCTAssertNil(model.entity(named: "LabelItem"))
        XCTAssertEqual(LabelItem.entityName, "Label")
        let context = privateContext("writer")
        try context.performAndWait {
            let made = LabelItem()
            made.text = "made"
            try context.insert(made)
            let inserted = try context.insert(LabelItem.self)
            inserted.text = "inserted"
            try context.save()
            XCTAssertEqual(made.entityName, "Label")
            XCTAssertEqual(
                try context.fetch(try FetchRequest<LabelItem>(sortBy: [SortDescriptor(\.text, comparator: .lexical)])).map(\.text),
                ["inserted", "made"])
        }
    }
}
