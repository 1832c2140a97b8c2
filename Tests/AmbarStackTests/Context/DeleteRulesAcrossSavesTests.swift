import AmbarStack
import Foundation
import XCTest

/// A delete's rules reach the rows another save linked to the object after the deleting context
/// read its relationships (as another process would, between the read and the save): the store
/// applies cascade, nullify and deny to them inside the save, so no row is left pointing at a
/// deleted object. (Under the `.error` merge policy such a delete is a merge conflict: the link
/// changed the deleted object's version.)
final class DeleteRulesAcrossSavesTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private var deleter: ManagedObjectContext!
    private var linker: ManagedObjectContext!
    private var otherCoordinator: PersistentStoreCoordinator!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let rules = try Self.model()
        coordinator = try PersistentStoreCoordinator(model: rules, store: try store("rules.sqlite"))
        // A second coordinator: its saves reach the first only through the store.
        otherCoordinator = try PersistentStoreCoordinator(model: rules, store: try store("rules.sqlite"))
        deleter = privateContext("deleter")
        // The linker's saves change the folder too (its inverse relationships): under `.error` the
        // delete would be a merge conflict. Under the other policies the delete goes ahead, and
        // the store must apply its rules to what the folder has now.
        deleter.mergePolicy = .mergeByPropertyObjectTrump
        linker = privateContext("linker", on: otherCoordinator)
    }

    override func tearDown() {
        deleter = nil
        linker = nil
        otherCoordinator = nil
        super.tearDown()
    }

    /// A folder whose notes cascade (and each note's flags in turn), whose pins are nullified,
    /// whose locks deny its deletion, and whose tags (many-to-many) cascade.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Folder",
                properties: [
                    .attribute("name", .string),
                    .toMany("notes", "Note", inverse: "folder", deleteRule: .cascade),
                    .toMany("pins", "Pin", inverse: "folder", deleteRule: .nullify),
                    .toMany("locks", "Lock", inverse: "folder", deleteRule: .deny),
                    .toMany("tags", "Tag", inverse: "folders", deleteRule: .cascade),
                ]),
            EntityDescription(
                "Note",
                properties: [
                    .attribute("title", .string),
                    .toOne("folder", "Folder", inverse: "notes"),
                    .toMany("flags", "Flag", inverse: "note", deleteRule: .cascade),
                ]),
            EntityDescription("Flag", properties: [.attribute("label", .string), .toOne("note", "Note", inverse: "flags")]),
            EntityDescription("Pin", properties: [.attribute("label", .string), .toOne("folder", "Folder", inverse: "pins")]),
            EntityDescription("Lock", properties: [.attribute("label", .string), .toOne("folder", "Folder", inverse: "locks")]),
            EntityDescription("Tag", properties: [.attribute("label", .string), .toMany("folders", "Folder", inverse: "tags")]),
        ])
    }

    /// Saves a folder, and has the deleting context read it with every relationship (all empty).
    private func folderReadByTheDeleter() throws -> ManagedObjectID {
        let id: ManagedObjectID = try deleter.performAndWait { () throws(AmbarError) in
            let folder = try deleter.insertObject(entityName: "Folder")
            try folder.setValue("Inbox", forKey: "name")
            try deleter.save()
            return folder.objectID
        }
        try deleter.performAndWait { () throws(AmbarError) in
            let folder = try deleter.existingObject(with: id)
            for key in ["notes", "pins", "locks", "tags"] { XCTAssertEqual(try folder.objects(forKey: key).count, 0) }
        }
        return id
    }

    /// The other coordinator links a new object of `entity` to the folder through `key`.
    @discardableResult
    private func link(_ entity: String, to folderID: ManagedObjectID, through key: String, toMany: Bool = false) throws -> ManagedObjectID {
        try linker.performAndWait { () throws(AmbarError) in
            let folder = try linker.existingObject(with: folderID)
            let object = try linker.insertObject(entityName: entity)
            try object.setValue("new", forKey: entity == "Note" ? "title" : "label")
            if toMany { try object.addObject(folder, toKey: key) } else { try object.setObject(folder, forKey: key) }
            try linker.save()
            return object.objectID
        }
    }

    private func count(_ entity: String) throws -> Int {
        let reader = privateContext("reader", on: otherCoordinator)
        return try reader.performAndWait { () throws(AmbarError) in try reader.count(for: FetchRequest<ManagedObject>(entityName: entity)) }
    }

    func testACascadeReachesRowsLinkedAfterTheRead() throws {
        let folderID = try folderReadByTheDeleter()
        let noteID = try link("Note", to: folderID, through: "folder")
        try linker.performAndWait { () throws(AmbarError) in
            let flag = try linker.insertObject(entityName: "Flag")
            try flag.setValue("urgent", forKey: "label")
            try flag.setObject(try linker.existingObject(with: noteID), forKey: "note")
            try linker.save()
        }
        let tagID = try link("Tag", to: folderID, through: "folders", toMany: true)
        let saves = Collector<DidSaveNotification>()
        let observation = deleter.observeDidSave { saves.append($0) }
        defer { observation.cancel() }
        try deleter.performAndWait { () throws(AmbarError) in
            // The deleter holds the new note too (fetched by ID), while its folder's notes stay
            // as it read them.
            let note = try deleter.existingObject(with: noteID)
            XCTAssertEqual(try note.value(forKey: "title"), .string("new"))
            try deleter.delete(try deleter.existingObject(with: folderID))
            try deleter.save()
            XCTAssertNil(deleter.registeredObject(for: noteID), "the deleter's object for the cascaded note is gone from it")
            XCTAssertNotEqual(note.managedObjectContext.map(ObjectIdentifier.init), ObjectIdentifier(deleter), "and no longer belongs to it")
        }
        XCTAssertEqual(try count("Folder"), 0)
        XCTAssertEqual(try count("Note"), 0, "the note linked after the read went with its folder")
        XCTAssertEqual(try count("Flag"), 0, "and its flag with it (the note's own cascade)")
        XCTAssertEqual(try count("Tag"), 0, "the many-to-many cascade reaches the tag linked after the read")
        let saved = try XCTUnwrap(saves.all.last)
        let deleted = saved.deleted
        XCTAssertTrue(deleted.contains(noteID) && deleted.contains(tagID), "the save reports what the rules deleted: \(deleted)")
        // The ledger records them, so other processes merge them.
        let token = try XCTUnwrap(saved.token)
        let transaction = try XCTUnwrap(try coordinator.history(after: token - 1).first { $0.token == token })
        XCTAssertTrue(transaction.deleted.contains(noteID) && transaction.deleted.contains(tagID), "\(transaction.deleted)")
    }

    func testANullifyClearsRowsLinkedAfterTheRead() throws {
        let folderID = try folderReadByTheDeleter()
        let pinID = try link("Pin", to: folderID, through: "folder")
        try deleter.performAndWait { () throws(AmbarError) in
            let pin = try deleter.existingObject(with: pinID)
            XCTAssertEqual(try pin.object(forKey: "folder")?.objectID, folderID)
            try deleter.delete(try deleter.existingObject(with: folderID))
            try deleter.save()
            XCTAssertNil(try pin.object(forKey: "folder"), "the deleter's pin follows the store: its folder is cleared")
        }
        XCTAssertEqual(try count("Pin"), 1, "the pin stays")
        let reader = privateContext("reader", on: otherCoordinator)
        try reader.performAndWait { () throws(AmbarError) in
            XCTAssertNil(try reader.existingObject(with: pinID).object(forKey: "folder"), "its folder is cleared in the store")
        }
    }

    func testADenyRefusesTheSaveWhenARowWasLinkedAfterTheRead() throws {
        let folderID = try folderReadByTheDeleter()
        try link("Lock", to: folderID, through: "folder")
        try deleter.performAndWait { () throws in
            try deleter.delete(try deleter.existingObject(with: folderID))
            XCTAssertThrowsError(try deleter.save()) { error in
                guard case AmbarError.validation(let object, let property, let reason) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(object, folderID)
                XCTAssertEqual(property, "locks")
                XCTAssertTrue(reason.contains("deny"), reason)
            }
            XCTAssertTrue(deleter.hasChanges, "the context keeps its delete, to decide again")
        }
        XCTAssertEqual(try count("Folder"), 1, "nothing was written")
        XCTAssertEqual(try count("Lock"), 1)
    }

    func testRowsTheContextKnewAreNotTouchedTwice() throws {
        let folderID = try folderReadByTheDeleter()
        let pinID = try link("Pin", to: folderID, through: "folder")
        try deleter.performAndWait { () throws(AmbarError) in
            // The deleter moves the pin elsewhere in the same save: the pin keeps that change.
            let pin = try deleter.existingObject(with: pinID)
            let other = try deleter.insertObject(entityName: "Folder")
            try other.setValue("Archive", forKey: "name")
            try pin.setObject(other, forKey: "folder")
            try deleter.delete(try deleter.existingObject(with: folderID))
            try deleter.save()
        }
        let reader = privateContext("reader", on: otherCoordinator)
        try reader.performAndWait { () throws(AmbarError) in
            XCTAssertEqual(try reader.existingObject(with: pinID).object(forKey: "folder")?.value(forKey: "name"), .string("Archive"))
        }
    }

    func testARowTheSaveAlsoChangesStillGetsTheRule() throws {
        let folderID = try folderReadByTheDeleter()
        let pinID = try link("Pin", to: folderID, through: "folder")
        try deleter.performAndWait { () throws(AmbarError) in
            // The deleter changes the pin's label, not its folder, and deletes the folder it read
            // without the pin: the pin's folder is still cleared, and its label is written.
            try deleter.existingObject(with: pinID).setValue("changed", forKey: "label")
            try deleter.delete(try deleter.existingObject(with: folderID))
            try deleter.save()
        }
        let reader = privateContext("reader", on: otherCoordinator)
        try reader.performAndWait { () throws(AmbarError) in
            let pin = try reader.existingObject(with: pinID)
            XCTAssertNil(try pin.object(forKey: "folder"), "no pin points at the deleted folder")
            XCTAssertEqual(try pin.value(forKey: "label"), .string("changed"))
        }
    }
}
