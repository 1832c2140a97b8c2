import AmbarStack
import AmbarTestSupport
import Foundation
import GRDB
import XCTest

/// Renaming identifiers: entities, attributes and relationships renamed in a new model
/// version keep their rows, values and links; object IDs keep their primary keys; the ledger
/// speaks the new names; and renames that cannot be honoured are refused with the store untouched.
final class RenameMigrationTests: XCTestCase {
    var directory: TemporaryDirectory!
    var file: URL { directory.file("renaming.sqlite") }

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory = nil }

    /// Shelves of books (with novels, a sub-entity) by authors: a root, a sub-entity, a to-one,
    /// its to-many inverse, and a many-to-many.
    func v1() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Shelf",
                properties: [
                    .attribute("name", .string, indexed: true),
                    .toMany("books", "Book", inverse: "shelf"),
                ]),
            EntityDescription(
                "Book",
                properties: [
                    .attribute("title", .string),
                    .toOne("shelf", "Shelf", inverse: "books"),
                    .toMany("authors", "Author", inverse: "books"),
                ], uniquenessConstraints: [["title"]]),
            EntityDescription("Novel", parent: "Book", properties: [.attribute("genre", .string)]),
            EntityDescription(
                "Author",
                properties: [
                    .attribute("name", .string),
                    .toMany("books", "Book", inverse: "authors"),
                ]),
        ])
    }

    /// Every element of v1 renamed. Renaming Author to Writer also moves the many-to-many's join
    /// table to the other side (it is named after the alphabetically first end).
    func v2() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Bookcase",
                properties: [
                    .attribute("label", .string, indexed: true, renamedFrom: "name"),
                    .toMany("volumes", "Volume", inverse: "bookcase", renamedFrom: "books"),
                ], renamingIdentifier: "Shelf"),
            EntityDescription(
                "Volume",
                properties: [
                    .attribute("heading", .string, renamedFrom: "title"),
                    .toOne("bookcase", "Bookcase", inverse: "volumes", renamedFrom: "shelf"),
                    .toMany("writers", "Writer", inverse: "works", renamedFrom: "authors"),
                ], uniquenessConstraints: [["heading"]], renamingIdentifier: "Book"),
            EntityDescription("Novel", parent: "Volume", properties: [.attribute("kind", .string, renamedFrom: "genre")]),
            EntityDescription(
                "Writer",
                properties: [
                    .attribute("name", .string),
                    .toMany("works", "Volume", inverse: "writers", renamedFrom: "books"),
                ], renamingIdentifier: "Author"),
        ])
    }

    /// Keys of the seeded objects, by name, to check that primary keys survive.
    struct Seeded { var keys: [String: Int64] = [:] }

    func seed() throws -> (PersistentStoreCoordinator, Seeded) {
        let old = try PersistentStoreCoordinator(model: try v1(), store: .sqlite(file))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: old)
        let seeded = try context.performAndWait { () throws -> Seeded in
            let shelf = try context.insertObject(entityName: "Shelf")
            try shelf.setValue("s1", forKey: "name")
            let novel = try context.insertObject(entityName: "Novel")
            try novel.setValue("n1", forKey: "title")
            try novel.setValue("sf", forKey: "genre")
            let book = try context.insertObject(entityName: "Book")
            try book.setValue("b2", forKey: "title")
            for volume in [novel, book] { try volume.setObject(shelf, forKey: "shelf") }
            let a1 = try context.insertObject(entityName: "Author")
            let a2 = try context.insertObject(entityName: "Author")
            try a1.setValue("a1", forKey: "name")
            try a2.setValue("a2", forKey: "name")
            try a1.setObjects([novel, book], forKey: "books")
            try a2.addObject(book, toKey: "books")
            try context.save()
            try book.setValue("b2-revised", forKey: "title")
            try context.save()
            var seeded = Seeded()
            for (name, object) in [("s1", shelf), ("n1", novel), ("b2", book), ("a1", a1), ("a2", a2)] {
                seeded.keys[name] = object.objectID.primaryKey
            }
            return seeded
        }
        return (old, seeded)
    }

    func testRenamedElementsKeepTheirRowsValuesLinksAndKeys() throws {
        let (_, seeded) = try seed()
        let migrated = try PersistentStoreCoordinator(model: try v2(), store: .sqlite(file))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: migrated)
        try context.performAndWait { () throws in
            let cases = try context.fetch(FetchRequest<ManagedObject>(entityName: "Bookcase"))
            XCTAssertEqual(cases.count, 1)
            let bookcase = try XCTUnwrap(cases.first)
            XCTAssertEqual(try bookcase.value(forKey: "label"), .string("s1"))
            XCTAssertEqual(bookcase.objectID.primaryKey, seeded.keys["s1"], "the row keeps its primary key")
            let volumes = try bookcase.objects(forKey: "volumes")
            XCTAssertEqual(Set(try volumes.map { try $0.value(forKey: "heading") }), [.string("n1"), .string("b2-revised")])

            let novels = try context.fetch(FetchRequest<ManagedObject>(entityName: "Novel"))
            let novel = try XCTUnwrap(novels.first)
            XCTAssertEqual(novels.count, 1)
            XCTAssertEqual(try novel.value(forKey: "kind"), .string("sf"))
            XCTAssertEqual(try novel.object(forKey: "bookcase")?.objectID, bookcase.objectID)
            XCTAssertEqual(novel.objectID.primaryKey, seeded.keys["n1"])
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Volume")), 2, "fetching the parent includes the sub-entity")

            let writers = try context.fetch(FetchRequest<ManagedObject>(entityName: "Writer", sortDescriptors: [Key<String>("name").sorted()]))
            XCTAssertEqual(try writers.map { try $0.value(forKey: "name") }, [.string("a1"), .string("a2")])
            XCTAssertEqual(try writers.map { try $0.objects(forKey: "works").count }, [2, 1], "the many-to-many kept its links, read from the writer's side")
            let b2 = try XCTUnwrap(volumes.first { (try? $0.value(forKey: "heading")) == .string("b2-revised") })
            XCTAssertEqual(Set(try b2.objects(forKey: "writers").map(\.objectID)), Set(writers.map(\.objectID)), "and from the volume's side")

            let duplicate = try context.insertObject(entityName: "Volume")
            try duplicate.setValue("n1", forKey: "heading")
            XCTAssertThrowsError(try context.save(), "the uniqueness constraint survived the column rename")
            try context.rollback()

            let writer = try context.insertObject(entityName: "Writer")
            try writer.setValue("a3", forKey: "name")
            try writer.addObject(b2, toKey: "works")
            try context.save()
            XCTAssertEqual(try b2.objects(forKey: "writers").count, 3, "the renamed relationship takes new links")
        }
        XCTAssertEqual(try migrated.integrityCheck(), [])
    }

    func testTheLedgerSpeaksTheNewNames() throws {
        _ = try seed()
        let migrated = try PersistentStoreCoordinator(model: try v2(), store: .sqlite(file))
        let history = try migrated.history(after: 0)
        XCTAssertEqual(history.count, 2)
        let inserted = Set(history[0].inserted.map(\.entityName))
        XCTAssertEqual(inserted, ["Bookcase", "Novel", "Volume", "Writer"])
        let updated = try XCTUnwrap(history[1].updated.first)
        XCTAssertEqual(updated.entityName, "Volume")
        XCTAssertEqual(history[1].updatedProperties[updated], ["heading"])
        // The IDs from the ledger resolve in the migrated store.
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: migrated)
        try context.performAndWait { () throws in
            XCTAssertEqual(try context.existingObject(with: updated).value(forKey: "heading"), .string("b2-revised"))
        }
    }

    func testIndexesFollowTheRenames() throws {
        _ = try seed()
        _ = try PersistentStoreCoordinator(model: try v2(), store: .sqlite(file))
        let indexes = try DatabaseQueue(path: file.path).read { db in
            try Row.fetchAll(db, sql: "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND name NOT LIKE 'ambar_%'")
                .map { "\($0["tbl_name"] as String):\($0["name"] as String)" }
        }
        XCTAssertEqual(
            Set(indexes),
            [
                "Bookcase:Bookcase_label",
                "Volume:Volume_Z_ENT", "Volume:Volume_bookcase", "Volume:Volume_unique_heading",
                "Z_Volume_writers:Z_Volume_writers_dst",
            ])
    }

    func testSwappedNamesSwapValues() throws {
        let v1 = try ManagedObjectModel(entities: [
            EntityDescription("Pair", properties: [.attribute("left", .string), .attribute("right", .string, indexed: true)])
        ])
        let swapped = try ManagedObjectModel(entities: [
            EntityDescription(
                "Pair",
                properties: [
                    .attribute("left", .string, indexed: true, renamedFrom: "right"),
                    .attribute("right", .string, renamedFrom: "left"),
                ])
        ])
        let old = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: v1, store: .sqlite(file)))
        try old.performAndWait { () throws in
            let pair = try old.insertObject(entityName: "Pair")
            try pair.setValue("L", forKey: "left")
            try pair.setValue("R", forKey: "right")
            try old.save()
        }
        let new = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: swapped, store: .sqlite(file)))
        try new.performAndWait { () throws in
            let pair = try XCTUnwrap(try new.fetch(FetchRequest<ManagedObject>(entityName: "Pair")).first)
            XCTAssertEqual(try pair.value(forKey: "left"), .string("R"))
            XCTAssertEqual(try pair.value(forKey: "right"), .string("L"))
            XCTAssertEqual(try new.count(for: FetchRequest<ManagedObject>(entityName: "Pair", predicate: Key<String>("left") == "R")), 1)
        }
    }

    func testAProcessOnTheOldModelIsToldTheStoreWasMigrated() throws {
        let (old, _) = try seed()
        _ = try PersistentStoreCoordinator(model: try v2(), store: .sqlite(file))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: old)
        try context.performAndWait {
            try context.insertObject(entityName: "Shelf").setValue("late", forKey: "name")
            XCTAssertThrowsError(try context.save()) { error in
                guard case .storeMigrated = error as? AmbarError else { return XCTFail("\(error)") }
            }
        }
        XCTAssertThrowsError(try PersistentStoreCoordinator(model: try v1(), store: .sqlite(file))) { error in
            guard case .storeMigrated = error as? AmbarError else { return XCTFail("\(error)") }
        }
    }

    func testRenamesThatCannotBeHonouredAreRefusedWithTheStoreUntouched() throws {
        _ = try seed()
        let bytes = try Data(contentsOf: file)
        let twoClaims = try ManagedObjectModel(entities: [
            EntityDescription("Shelf", properties: [.attribute("name", .string, indexed: true), .attribute("label", .string, renamedFrom: "name")]),
            EntityDescription("Book", properties: [.attribute("title", .string)]),
            EntityDescription("Author", properties: [.attribute("name", .string)]),
        ])
        XCTAssertThrowsError(try PersistentStoreCoordinator(model: twoClaims, store: .sqlite(file))) { error in
            guard case .migrationRefused(let reasons) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertEqual(reasons, ["properties Shelf.name and Shelf.label both claim to be name (check their renaming identifiers)"])
        }
        let retypedRename = try ManagedObjectModel(
            entities: try v2().entities.map { entity in
                var entity = entity
                if entity.name == "Writer" { entity.attributes = [AttributeDescription(name: "fullName", type: .integer64, renamingIdentifier: "name")] }
                return entity
            })
        XCTAssertThrowsError(try PersistentStoreCoordinator(model: retypedRename, store: .sqlite(file))) { error in
            guard case .migrationRefused(let reasons) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertEqual(reasons, ["attribute Writer.fullName changed type from string to integer64"], "the reason uses the new names")
        }
        XCTAssertEqual(try Data(contentsOf: file), bytes, "the store file is byte-for-byte unchanged")
        XCTAssertEqual(try PersistentStoreCoordinator.storedModel(at: file).versionHash, try v1().versionHash)
    }

    /// The renaming identifiers come from model files too: `renamingIdentifier` in the JSON
    /// format, Xcode's Renaming ID (`elementID`) in a Core Data model.
    func testRenamingIdentifiersFromModelFiles() throws {
        let json = directory.file("Notes.json")
        let xml = directory.file("contents")
        try #"{"entities": [{"name": "Note", "attributes": [{"name": "text", "type": "string"}]}]}"#
            .write(to: json, atomically: true, encoding: .utf8)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel">
            <entity name="Memo" elementID="Note">
                <attribute name="body" attributeType="String" elementID="text"/>
            </entity>
        </model>
        """.write(to: xml, atomically: true, encoding: .utf8)
        let old = ManagedObjectContext(
            concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: try ModelFile.load(json), store: .sqlite(file)))
        try old.performAndWait { () throws in
            try old.insertObject(entityName: "Note").setValue("kept", forKey: "text")
            try old.save()
        }
        let memo = try ModelFile.load(xml)
        XCTAssertEqual(memo.entity(named: "Memo")?.renamingIdentifier, "Note")
        let new = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: memo, store: .sqlite(file)))
        try new.performAndWait { () throws in
            let memos = try new.fetch(FetchRequest<ManagedObject>(entityName: "Memo"))
            XCTAssertEqual(try memos.map { try $0.value(forKey: "body") }, [.string("kept")])
        }
        let renamedBack = directory.file("Notes2.json")
        try #"{"entities": [{"name": "Note", "renamingIdentifier": "Memo", "attributes": [{"name": "text", "type": "string", "renamingIdentifier": "body"}]}]}"#
            .write(to: renamedBack, atomically: true, encoding: .utf8)
        let back = ManagedObjectContext(
            concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: try ModelFile.load(renamedBack), store: .sqlite(file)))
        try back.performAndWait { () throws in
            let notes = try back.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            XCTAssertEqual(try notes.map { try $0.value(forKey: "text") }, [.string("kept")], "and back again, by the JSON format's renamingIdentifier")
        }
    }

    func testARenamingIdentifierAloneIsNotANewVersion() throws {
        let plain = try ManagedObjectModel(entities: [EntityDescription("Note", properties: [.attribute("text", .string)])])
        let annotated = try ManagedObjectModel(entities: [
            EntityDescription("Note", properties: [.attribute("text", .string, renamedFrom: "body")], renamingIdentifier: "Memo")
        ])
        XCTAssertEqual(plain.versionHash, annotated.versionHash)
        let first = try PersistentStoreCoordinator(model: plain, store: .sqlite(file))
        _ = try PersistentStoreCoordinator(model: annotated, store: .sqlite(file))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: first)
        try context.performAndWait { () throws in
            try context.insertObject(entityName: "Note").setValue("still writes", forKey: "text")
            try context.save()
        }
    }
}
