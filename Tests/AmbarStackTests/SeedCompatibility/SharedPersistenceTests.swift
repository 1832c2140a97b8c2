import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

final class NoteObject: ManagedObject, StringIdentified {
    override class var entityName: String { "Note" }
    @Managed("idString") var idString: String
    @Managed("text") var text: String
}

/// BBLCoreDataKit on AmbarStack.
final class SharedPersistenceTests: XCTestCase {
    var directory: TemporaryDirectory!
    var persistence: SharedPersistence!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        let model = try ManagedObjectModel(
            entities: [
                EntityDescription(
                    "Note",
                    properties: [
                        .attribute("idString", .string, indexed: true),
                        .attribute("text", .string, defaultValue: ""),
                    ], uniquenessConstraints: [["idString"]])
            ], classes: [NoteObject.self])
        persistence = SharedPersistence(model: model, storeURL: directory.url, name: "notes")
    }

    override func tearDown() {
        persistence = nil
        directory = nil
    }

    func save(_ stack: ContextStack, _ body: (ObjectCollection<NoteObject>) throws -> Void) throws {
        try stack.performAndWait { () throws in
            try body(stack.collection(NoteObject.self))
            try stack.save(site: "test")
        }
    }

    /// Waits until every merge already queued for `stack` has run (its queue is serial).
    func settle(_ stack: ContextStack) { stack.performAndWait {} }

    // Rows 5 and 44
    func testTheStoreOpensWithTheFirstContextAndStacksShareOneCoordinator() throws {
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("notes.sqlite").path), "no I/O before a context exists")
        let a = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.file("notes.sqlite").path))
        let b = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        XCTAssertFalse(a.context === b.context)
        XCTAssertTrue(a.context.persistentStoreCoordinator === b.context.persistentStoreCoordinator)
        XCTAssertEqual(persistence.registeredContextCount, 2)
    }

    // Row 30: every save reaches the siblings, insert-only and delete-only ones included, and
    // updates of objects the sibling never loaded are reported there.
    func testSavesMergeIntoSiblingsWithUpdatesMaterialised() throws {
        let writer = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        let reader = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        var updates: [String] = []
        var inserts = 0
        var deletes = 0
        let monitor = reader.performAndWait {
            EntityMonitor<NoteObject>(context: reader.context) { ins, upd, del in
                inserts += ins.count
                updates += upd.map(\.text)
                deletes += del.count
            }
        }
        try save(writer) { _ = try $0.object(idString: "n1") }
        settle(reader)
        XCTAssertEqual(inserts, 1, "an insert-only save is merged (BBL's later regression avoided)")
        try save(writer) { try $0.object(idString: "n1").text = "edited" }
        settle(reader)
        XCTAssertEqual(updates, ["edited"], "the update is reported although the reader never loaded the note")
        try save(writer) { try writer.context.delete(try XCTUnwrap(try $0.existingObject(idString: "n1"))) }
        settle(reader)
        XCTAssertEqual(deletes, 1, "a delete-only save is merged")
        withExtendedLifetime(monitor) {}
    }

    // Row 46
    func testARemovedContextGetsNoMoreMerges() throws {
        let writer = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        let reader = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        try save(writer) { try $0.object(idString: "n1").text = "one" }
        let note = try reader.performAndWait { try XCTUnwrap(try reader.collection(NoteObject.self).existingObject(idString: "n1")) }
        reader.deinitialize()
        XCTAssertEqual(persistence.registeredContextCount, 1)
        try save(writer) { try $0.object(idString: "n1").text = "two" }
        settle(reader)
        XCTAssertEqual(reader.performAndWait { note.text }, "one", "not merged any more")
    }

    // Row 47
    func testAChildStackSavesIntoItsParentOnly() throws {
        let parent = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        let sibling = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        let child = ContextStack(parentStack: parent, concurrencyType: .privateQueue)
        try save(child) { try $0.object(idString: "c1").text = "from child" }
        XCTAssertTrue(parent.performAndWait { parent.context.hasChanges }, "the parent holds the child's changes, unsaved")
        settle(sibling)
        XCTAssertEqual(try sibling.performAndWait { try NoteObject.count(in: sibling.context) }, 0, "siblings see nothing yet")
        try parent.performAndWait { try parent.save(site: "parent") }
        settle(sibling)
        XCTAssertEqual(try sibling.performAndWait { try NoteObject.count(in: sibling.context) }, 1)
    }

    // Rows 38, 39
    func testSaveAndFetchWithASiteThrowTaggedErrors() throws {
        let stack = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        try stack.performAndWait { () throws in
            try stack.save(site: "nothing to save")  // no changes: a no-op
            let note = try stack.collection(NoteObject.self).object(idString: "n1")
            try note.setValue(.null, forKey: "text")
            XCTAssertThrowsError(try stack.save(site: "NotesScreen.commit")) { error in
                XCTAssertEqual((error as? SiteTaggedError)?.site, "NotesScreen.commit")
                guard case .validation = (error as? SiteTaggedError)?.error else { return XCTFail("\(error)") }
            }
            let broken = stack.collection(NoteObject.self).frc(sortKey: "nope")
            XCTAssertThrowsError(try broken.fetch(site: "NotesScreen.load")) { error in
                XCTAssertEqual((error as? SiteTaggedError)?.operation, "fetch")
            }
        }
    }

    // Rows 53, 70
    func testCollectionLookupsAndControllers() throws {
        let stack = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        try stack.performAndWait { () throws in
            let notes = stack.collection(NoteObject.self)
            XCTAssertNil(try notes.existingObject(idString: "b"))
            let b = try notes.object(idString: "b")
            XCTAssertTrue(try notes.object(idString: "b") === b, "twice in one context: the same object")
            _ = try notes.object(idString: "a")
            let uuid = UUID()
            XCTAssertEqual(try notes.object(identifier: uuid).identifier, uuid)
            XCTAssertNil(b.identifier, "not a UUID: nil, not a crash")
            try stack.save(site: "seed")
            let all = notes.allObjects()
            try all.performFetch()
            XCTAssertEqual(all.fetchedObjects.map(\.idString), ["a", "b", uuid.uuidString].sorted())
            XCTAssertEqual(try notes.deleteAll(), 3)
            XCTAssertEqual(try NoteObject.count(in: stack.context, includePending: false), 3, "deleteAll does not save")
        }
    }

    // Row 71
    func testAControllerGroupReplaysExistingObjectsAsInsertsAndStops() throws {
        let stack = try ContextStack(persistence: persistence, concurrencyType: .privateQueue)
        try save(stack) { notes in for id in ["x", "y", "z"] { _ = try notes.object(idString: id) } }
        try stack.performAndWait { () throws in
            let group = ResultsControllerGroup()
            let controller = stack.collection(NoteObject.self).allObjects()
            var received: [ResultsChange] = []
            group.add(controller) { received += $0 }
            try group.start()
            XCTAssertEqual(received.count, 3)
            XCTAssertTrue(received.allSatisfy { if case .insert = $0 { true } else { false } })
            _ = try stack.collection(NoteObject.self).object(idString: "w")
            stack.context.processPendingChanges()
            XCTAssertEqual(received.count, 4, "later changes follow")
            let id = controller.fetchedObjects[0].objectID
            group.setObjectID(id, inProgress: true, on: controller)
            XCTAssertTrue(group.isInProgress(id, on: controller))
            group.stop()
            _ = try stack.collection(NoteObject.self).object(idString: "v")
            stack.context.processPendingChanges()
            XCTAssertEqual(received.count, 4, "stopped: no more callbacks")
            group.clear()
            XCTAssertEqual(group.count, 0)
            XCTAssertFalse(group.isInProgress(id, on: controller))
        }
    }
}
