import AmbarModels
import Foundation
import XCTest

/// A model declared in its classes (`@Model`): the entities come from the declarations, and the
/// declared properties read and write, save, merge, cascade and stay unique like those of any
/// other model.
final class DeclaredModelTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    override func setUpWithError() throws {
        try super.setUpWithError()
        model = try Tracker.model()
        coordinator = try PersistentStoreCoordinator(model: model, store: try store("tracker.sqlite"))
    }

    func testTheEntitiesComeFromTheDeclarations() throws {
        let task = try XCTUnwrap(model.entity(named: "Task"))
        let attributes = Dictionary(uniqueKeysWithValues: task.attributes.map { ($0.name, $0) })
        XCTAssertEqual(task.attributes.map(\.name), ["title", "done", "due", "priority", "tags", "draft", "reference"])
        XCTAssertEqual(attributes["title"]?.type, .string)
        XCTAssertEqual(attributes["title"]?.isOptional, false)
        XCTAssertEqual(attributes["done"]?.type, .boolean)
        XCTAssertEqual(attributes["done"]?.defaultValue, .bool(false))
        XCTAssertEqual(attributes["due"]?.type, .date)
        XCTAssertEqual(attributes["due"]?.isOptional, true)
        XCTAssertEqual(attributes["priority"]?.type, .integer64)
        XCTAssertEqual(attributes["priority"]?.defaultValue, .integer(0))
        XCTAssertEqual(attributes["tags"]?.type, .transformable)
        XCTAssertEqual(attributes["draft"]?.isTransient, true)
        XCTAssertEqual(attributes["reference"]?.isIndexed, true)
        XCTAssertEqual(attributes["reference"]?.renamingIdentifier, "code")
        let toProject = try XCTUnwrap(task.relationships.first)
        XCTAssertEqual(toProject.name, "project")
        XCTAssertEqual(toProject.destination, "Project")
        XCTAssertFalse(toProject.isToMany)
        XCTAssertEqual(toProject.inverse, "tasks", "the inverse declared on the other side is completed here")

        let project = try XCTUnwrap(model.entity(named: "Project"))
        XCTAssertEqual(project.uniquenessConstraints, [["name"]])
        let tasks = try XCTUnwrap(project.relationships.first)
        XCTAssertTrue(tasks.isToMany)
        XCTAssertEqual(tasks.deleteRule, .cascade)
        XCTAssertEqual(tasks.inverse, "project")
        XCTAssertEqual(Tracker.Task.declaredName(for: \Tracker.Task.priority), "priority")
        XCTAssertNil(Tracker.Task.declaredName(for: \Tracker.Task.scratch), "a @Transient property is not part of the entity")
    }

    func testDeclaredPropertiesSaveMergeAndCascade() throws {
        let writer = privateContext("writer")
        let reader = privateContext("reader")
        // A typed property cannot throw: a read or write that went wrong would only be reported.
        let failures = Collector<ContextFailure>()
        let watched = [writer.observeFailures { failures.append($0) }, reader.observeFailures { failures.append($0) }]
        defer {
            watched.forEach { $0.cancel() }
            XCTAssertEqual(failures.all.map(\.description), [], "declared properties read and write without failures")
        }
        let (projectID, taskID) = try writer.performAndWait {
            let project = try writer.insert(Tracker.Project.self)
            project.name = "Home"
            project.createdAt = Date(timeIntervalSince1970: 1_000)
            let task = try writer.insert(Tracker.Task.self)
            XCTAssertFalse(task.done, "defaults apply to objects the context makes")
            XCTAssertEqual(task.tags, [])
            task.title = "Paint the fence"
            task.priority = 2
            task.tags = ["outside", "summer"]
            task.draft = "not stored"
            task.scratch = 7
            task.project = project
            XCTAssertEqual(project.tasks, [task], "the inverse follows")
            try writer.save()
            return (project.objectID, task.objectID)
        }

        try reader.performAndWait {
            let task = try XCTUnwrap(try reader.existingObject(with: taskID) as? Tracker.Task)
            XCTAssertEqual(task.title, "Paint the fence")
            XCTAssertEqual(task.priority, 2)
            XCTAssertFalse(task.done)
            XCTAssertNil(task.due)
            XCTAssertEqual(task.tags, ["outside", "summer"])
            XCTAssertNil(task.draft, "a transient attribute is not stored")
            XCTAssertEqual(task.scratch, 0)
            XCTAssertEqual(task.project?.name, "Home")
            XCTAssertEqual(task.project?.createdAt, Date(timeIntervalSince1970: 1_000))
            let open = try reader.fetch(FetchRequest<Tracker.Task>(predicate: Key<Bool>("done") == false))
            XCTAssertEqual(open.map(\.objectID), [taskID])
        }

        // A change saved elsewhere reaches an object already held.
        let held: Tracker.Task = try reader.performAndWait { try XCTUnwrap(try reader.existingObject(with: taskID) as? Tracker.Task) }
        let saves = Collector<DidSaveNotification>()
        let observation = writer.observeDidSave { saves.append($0) }
        try writer.performAndWait {
            let task = try XCTUnwrap(try writer.existingObject(with: taskID) as? Tracker.Task)
            task.done = true
            try writer.save()
        }
        observation.cancel()
        reader.mergeChanges(fromContextDidSave: try XCTUnwrap(saves.all.first))
        reader.performAndWait { XCTAssertTrue(held.done) }

        // Deleting the project deletes its tasks (cascade).
        try writer.performAndWait {
            try writer.delete(try writer.existingObject(with: projectID))
            try writer.save()
            XCTAssertEqual(try writer.count(for: FetchRequest<Tracker.Task>()), 0)
        }
    }

    func testAUniqueDeclaredAttributeRefusesADuplicate() throws {
        let context = privateContext()
        try context.performAndWait {
            try context.insert(Tracker.Project.self).name = "Work"
            try context.save()
            try context.insert(Tracker.Project.self).name = "Work"
            assertThrows({ try context.save() }) {
                if case .constraintViolation(let entity, let attributes, _, _) = $0 { return entity == "Project" && attributes == ["name"] }
                return false
            }
        }
    }

    func testDeclaredClassesAndDescribedEntitiesMakeOneModel() throws {
        let note = EntityDescription("Note", properties: [.attribute("text", .string, optional: true)])
        let mixed = try ManagedObjectModel(declaring: [Tracker.Project.self], entities: [note])
        XCTAssertEqual(Set(mixed.entities.map(\.name)), ["Project", "Task", "Note"])
        let coordinator = try PersistentStoreCoordinator(model: mixed, store: try store("mixed.sqlite"))
        let context = privateContext("mixed", on: coordinator)
        try context.performAndWait {
            let project = try context.insert(Tracker.Project.self)
            project.name = "Mixed"
            let text = try context.insertObject(entityName: "Note")
            try text.setValue("hello", forKey: "text")
            try context.save()
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Note")), 1)
            XCTAssertEqual(try context.fetch(FetchRequest<Tracker.Project>()).map(\.name), ["Mixed"])
        }
    }
}
