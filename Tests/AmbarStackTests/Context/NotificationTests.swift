import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

final class Collector<T: Sendable>: Sendable {
    private let items = Locked<[T]>([])
    func append(_ item: T) { items.withLock { $0.append(item) } }
    var all: [T] { items.withLock { $0 } }
}

final class NotificationTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testDidSaveCarriesPermanentIDsOfEachKind() throws {
        let doomed = try seedEmployee("Doomed")
        let changed = try seedEmployee("Changed")
        let context = privateContext()
        let saves = Collector<DidSaveNotification>()
        let observation = context.observeDidSave { saves.append($0) }
        defer { observation.cancel() }
        let insertedID: ManagedObjectID = try context.performAndWait {
            try context.delete(try context.existingObject(with: doomed))
            (try context.existingObject(with: changed) as? Employee)?.salary = 7
            let e = try context.insert(Employee.self)
            e.name = "New"
            try context.save()
            return e.objectID
        }
        XCTAssertEqual(saves.all.count, 1)
        let note = try XCTUnwrap(saves.all.first)
        XCTAssertEqual(note.inserted, [insertedID])
        XCTAssertEqual(note.updated, [changed])
        XCTAssertEqual(note.deleted, [doomed])
        XCTAssertFalse(insertedID.isTemporaryID)
        XCTAssertEqual(note.context, context.identifier)
    }

    func testObjectsDidChangeIsCoalescedPerPerformBlock() throws {
        let context = privateContext()
        let changes = Collector<ObjectsDidChangeNotification>()
        let observation = context.observeObjectsDidChange { changes.append($0) }
        defer { observation.cancel() }
        context.performAndWait {
            let a = try? context.insert(Employee.self)
            a?.name = "A"
            a?.name = "A2"
            _ = try? context.insert(Employee.self)
        }
        XCTAssertEqual(changes.all.count, 1)
        XCTAssertEqual(changes.all.first?.inserted.count, 2)
    }

    func testAsyncSequenceDeliversDidSave() async throws {
        let context = privateContext()
        let stream = context.didSaveNotifications()
        try await context.perform { () throws(AmbarError) in
            let e = try context.insert(Employee.self)
            e.name = "Streamed"
            try context.save()
        }
        var iterator = stream.makeAsyncIterator()
        let note = await iterator.next()
        XCTAssertEqual(note?.inserted.count, 1)
    }

    func testMergeRefreshesRegisteredObjectsKeepsLocalEditsAndAppliesDeletes() throws {
        let a = try seedEmployee("A", salary: 1)
        let b = try seedEmployee("B", salary: 1)
        let c = try seedEmployee("C", salary: 1)
        let viewer = privateContext("viewer")
        let changes = Collector<ObjectsDidChangeNotification>()
        let observation = viewer.observeObjectsDidChange { changes.append($0) }
        defer { observation.cancel() }
        try viewer.performAndWait {
            let objects = try viewer.fetch(FetchRequest<Employee>(sortDescriptors: [Key<String>("name").sorted()]))
            XCTAssertEqual(objects[0].salary, 1)
            objects[1].age = 55  // a local unsaved edit on B
            _ = objects[1].salary
        }
        let writer = privateContext("writer")
        let saves = Collector<DidSaveNotification>()
        let writerObservation = writer.observeDidSave { saves.append($0) }
        defer { writerObservation.cancel() }
        try writer.performAndWait {
            for id in [a, b] { (try writer.existingObject(with: id) as? Employee)?.salary = 2 }
            try writer.delete(try writer.existingObject(with: c))
            let d = try writer.insert(Employee.self)
            d.name = "D"
            try writer.save()
        }
        let note = try XCTUnwrap(saves.all.first)
        let before = changes.all.count
        viewer.mergeChanges(fromContextDidSave: note)
        try viewer.performAndWait {
            let ea = try XCTUnwrap(viewer.registeredObject(for: a) as? Employee)
            let eb = try XCTUnwrap(viewer.registeredObject(for: b) as? Employee)
            XCTAssertEqual(ea.salary, 2, "refreshed")
            XCTAssertEqual(eb.salary, 2, "refreshed")
            XCTAssertEqual(eb.age, 55, "local edit kept")
            XCTAssertTrue(eb.isUpdated)
            XCTAssertNil(viewer.registeredObject(for: c), "deleted object left the context")
            XCTAssertEqual(viewer.registeredObjectCount, 2, "inserted objects are not loaded")
            try viewer.save()
        }
        let merged = Array(changes.all.dropFirst(before))
        XCTAssertEqual(merged.count, 1, "one objects-did-change for the merge")
        XCTAssertEqual(merged.first?.refreshed, [a, b])
        XCTAssertEqual(merged.first?.deleted, [c])
        XCTAssertEqual(merged.first?.inserted.count, 1)
        let fresh = privateContext("fresh")
        try fresh.performAndWait {
            let eb = try XCTUnwrap(try fresh.existingObject(with: b) as? Employee)
            XCTAssertEqual(eb.age, 55)
            XCTAssertEqual(eb.salary, 2)
        }
    }

    func testAutomaticallyMergesChangesFromOtherRootContexts() throws {
        let id = try seedEmployee("A", salary: 1)
        let viewer = privateContext("viewer")
        viewer.automaticallyMergesChangesFromParent = true
        try viewer.performAndWait { _ = (try viewer.existingObject(with: id) as? Employee)?.salary }
        let writer = privateContext("writer")
        try writer.performAndWait {
            (try writer.existingObject(with: id) as? Employee)?.salary = 3
            try writer.save()
        }
        var salary = 0.0
        let merged = eventually(timeout: 5, every: 0.001) {
            salary = viewer.performAndWait { (viewer.registeredObject(for: id) as? Employee)?.salary ?? 0 }
            return salary == 3
        }
        XCTAssertTrue(merged, "the viewer has salary \(salary)")
    }

    func testRefreshRollbackAndReset() throws {
        let id = try seedEmployee("A", salary: 1)
        let context = privateContext()
        try context.performAndWait {
            let e = try XCTUnwrap(try context.existingObject(with: id) as? Employee)
            e.salary = 9
            try context.refresh(e, mergeChanges: false)
            XCTAssertTrue(e.isFault)
            XCTAssertEqual(e.salary, 1)
            e.salary = 9
            let n = try context.insert(Employee.self)
            n.name = "N"
            try context.rollback()
            XCTAssertEqual(e.salary, 1)
            XCTAssertFalse(context.hasChanges)
            XCTAssertNil(n.managedObjectContext)
            try context.reset()
            XCTAssertEqual(context.registeredObjectCount, 0)
            XCTAssertNil(e.managedObjectContext)
        }
        // refreshAllObjects picks up a change made elsewhere.
        let other = privateContext("other")
        try context.performAndWait { _ = (try context.existingObject(with: id) as? Employee)?.salary }
        try other.performAndWait {
            (try other.existingObject(with: id) as? Employee)?.salary = 4
            try other.save()
        }
        try context.performAndWait {
            try context.refreshAllObjects()
            XCTAssertEqual((context.registeredObject(for: id) as? Employee)?.salary, 4)
        }
    }

    /// A context records an object's first edit and skips the bookkeeping of the next ones; an
    /// announcement, a refresh or a save must make the next edit count again.
    func testEditsAfterAnAnnouncementOrARefreshAreAnnouncedAndSaved() throws {
        let id = try seedEmployee("A", salary: 1)
        let context = privateContext()
        let changes = Collector<ObjectsDidChangeNotification>()
        let observation = context.observeObjectsDidChange { changes.append($0) }
        defer { observation.cancel() }
        try context.performAndWait {
            let e = try XCTUnwrap(try context.existingObject(with: id) as? Employee)
            e.salary = 2
            e.age = 30
        }
        try context.performAndWait {
            let e = try XCTUnwrap(context.registeredObject(for: id) as? Employee)
            e.salary = 3
        }
        XCTAssertEqual(changes.all.map(\.updated), [[id], [id]], "each block's edit is announced")
        try context.performAndWait {
            let e = try XCTUnwrap(context.registeredObject(for: id) as? Employee)
            e.salary = 4
            try context.refresh(e, mergeChanges: false)
            XCTAssertFalse(context.hasChanges)
            e.salary = 5
            XCTAssertTrue(context.hasChanges, "an edit after a refresh is a change again")
            XCTAssertEqual(context.updatedObjects.map(\.objectID), [id])
            try context.save()
            e.salary = 6
            XCTAssertEqual(context.updatedObjects.map(\.objectID), [id], "an edit after a save is a change again")
            try context.save()
        }
        let reader = privateContext("reader")
        try reader.performAndWait {
            XCTAssertEqual((try reader.existingObject(with: id) as? Employee)?.salary, 6)
        }
    }
}
