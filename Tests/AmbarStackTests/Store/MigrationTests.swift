import AmbarStack
import Foundation
import XCTest

/// Lightweight migration in place: additive changes migrate with the data kept;
/// anything else is refused with reasons and the store untouched; a process still on the old
/// model gets a clear error instead of writing into changed tables.
final class MigrationTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    /// The migrating store (a file, or a database on the PostgreSQL test server).
    var migrating: StoreDescription { get throws { try store("migrating.sqlite") } }

    func v1() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [EntityDescription("Item", properties: [.attribute("name", .string)])])
    }

    func v2() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Item",
                properties: [
                    .attribute("name", .string, indexed: true),
                    .attribute("note", .string, optional: true),
                    .attribute("rank", .integer64, defaultValue: 7),
                    .toOne("tag", "Tag", inverse: "items"),
                ]),
            EntityDescription(
                "Tag",
                properties: [
                    .attribute("label", .string),
                    .toMany("items", "Item", inverse: "tag"),
                ]),
        ])
    }

    func open(_ model: ManagedObjectModel) throws -> PersistentStoreCoordinator {
        try PersistentStoreCoordinator(model: model, store: try migrating)
    }

    func seed() throws -> PersistentStoreCoordinator {
        let old = try open(try v1())
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: old)
        try context.performAndWait { () throws in
            for name in ["a", "b", "c"] { try context.insertObject(entityName: "Item").setValue(name, forKey: "name") }
            try context.save()
        }
        return old
    }

    func testAdditiveChangesMigrateInPlaceKeepingTheData() throws {
        _ = try seed()
        let migrated = try open(try v2())
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: migrated)
        try context.performAndWait { () throws in
            let items = try context.fetch(FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [Key<String>("name").sorted()]))
            XCTAssertEqual(try items.map { try $0.value(forKey: "name") }, [.string("a"), .string("b"), .string("c")])
            XCTAssertEqual(try items[0].value(forKey: "rank"), .integer(7), "existing rows get the new attribute's default")
            XCTAssertEqual(try items[0].value(forKey: "note"), .null)
            let tag = try context.insertObject(entityName: "Tag")
            try tag.setValue("new", forKey: "label")
            try items[0].setObject(tag, forKey: "tag")
            try context.save()
        }
        XCTAssertEqual(try PersistentStoreCoordinator.storedModel(in: try migrating).versionHash, try v2().versionHash, "the store keeps its new model")
    }

    func testAProcessStillOnTheOldModelGetsAClearErrorAndWritesNothing() throws {
        let old = try seed()
        _ = try open(try v2())  // another "process" migrates
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: old)
        try context.performAndWait {
            try context.insertObject(entityName: "Item").setValue("late", forKey: "name")
            XCTAssertThrowsError(try context.save()) { error in
                guard case .storeMigrated = error as? AmbarError else { return XCTFail("\(error)") }
            }
        }
        XCTAssertThrowsError(try open(try v1()), "opening with the older model again") { error in
            guard case .storeMigrated = error as? AmbarError else { return XCTFail("\(error)") }
        }
        let check = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try open(try v2()))
        XCTAssertEqual(try check.performAndWait { try check.count(for: FetchRequest<ManagedObject>(entityName: "Item")) }, 3)
    }

    /// A process still on the old model whose insert the migrated tables refuse (a uniqueness
    /// constraint the new model added) is told that the store was migrated, not what its
    /// statement met, and writes nothing.
    func testAProcessStillOnTheOldModelWhoseWriteTheNewTablesRefuseGetsTheSameError() throws {
        let old = try seed()
        let unique = try ManagedObjectModel(entities: [EntityDescription("Item", properties: [.attribute("name", .string)], uniquenessConstraints: [["name"]])])
        _ = try open(unique)  // another "process" migrates
        let oldHash = try v1().versionHash
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: old)
        try context.performAndWait {
            try context.insertObject(entityName: "Item").setValue("a", forKey: "name")  // taken, in the new model
            XCTAssertThrowsError(try context.save()) { error in
                guard case .storeMigrated(let storeHash, let modelHash)? = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertEqual(storeHash, unique.versionHash)
                XCTAssertEqual(modelHash, oldHash)
            }
        }
        let check = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try open(unique))
        XCTAssertEqual(try check.performAndWait { try check.count(for: FetchRequest<ManagedObject>(entityName: "Item")) }, 3)
    }

    func testNonAdditiveChangesAreRefusedWithReasonsAndTheStoreUntouched() throws {
        _ = try seed()
        let retyped = try ManagedObjectModel(entities: [
            EntityDescription("Item", properties: [.attribute("name", .integer64), .attribute("size", .double)])
        ])
        XCTAssertThrowsError(try open(retyped)) { error in
            guard case .migrationRefused(let reasons) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertTrue(reasons.contains { $0.contains("Item.name changed type") }, "\(reasons)")
            XCTAssertTrue(reasons.contains { $0.contains("Item.size is required and has no default") }, "\(reasons)")
        }
        let dropped = try ManagedObjectModel(entities: [EntityDescription("Other", properties: [.attribute("x", .string)])])
        XCTAssertThrowsError(try open(dropped)) { error in
            guard case .migrationRefused(let reasons) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertEqual(reasons, ["entity Item was removed"])
        }
        XCTAssertEqual(try PersistentStoreCoordinator.storedModel(in: try migrating).versionHash, try v1().versionHash, "nothing changed")
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try open(try v1()))
        XCTAssertEqual(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) }, 3)
    }

    func testANewUniquenessConstraintMigratesOnceTheRowsKeepIt() throws {
        _ = try seed()
        let unique = try ManagedObjectModel(entities: [EntityDescription("Item", properties: [.attribute("name", .string)], uniquenessConstraints: [["name"]])])
        // Two rows share a name: refused, saying what to do, and nothing changed.
        let old = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try open(try v1()))
        try old.performAndWait { () throws in
            try old.insertObject(entityName: "Item").setValue("a", forKey: "name")
            try old.save()
        }
        XCTAssertThrowsError(try open(unique)) { error in
            guard case .migrationRefused(let reasons) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertTrue(
                reasons.contains { $0.contains("Item(name)") && $0.contains("1 set of values") && $0.contains("remove the duplicates") }, "\(reasons)")
        }
        XCTAssertEqual(try PersistentStoreCoordinator.storedModel(in: try migrating).versionHash, try v1().versionHash, "nothing changed")

        // The duplicate removed with the old model: the constraint is added, and kept from then on.
        try old.performAndWait { () throws in
            let duplicates = try old.fetch(FetchRequest<ManagedObject>(entityName: "Item", predicate: Key<String>("name") == "a"))
            try old.delete(duplicates[1])
            try old.save()
        }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try open(unique))
        try context.performAndWait { () throws in
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")), 3)
            try context.insertObject(entityName: "Item").setValue("b", forKey: "name")
            XCTAssertThrowsError(try context.save()) { error in
                guard case .constraintViolation = error as? AmbarError else { return XCTFail("\(error)") }
            }
        }

        // Dropping it again is not lightweight (the first model is only older: the store says so).
        let withoutIt = try ManagedObjectModel(entities: [
            EntityDescription("Item", properties: [.attribute("name", .string), .attribute("note", .string, optional: true)])
        ])
        XCTAssertThrowsError(try open(withoutIt)) { error in
            guard case .migrationRefused(let reasons) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertEqual(reasons, ["entity Item dropped its uniqueness constraint on name"])
        }
    }

    func testConcurrentOpenersMigrateOnceAndAllOpen() throws {
        _ = try seed()
        let migrating = try self.migrating
        let model = try v2()
        let counts = Collector<String>()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: model, store: migrating))
                counts.append("\(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Item")) })")
            } catch {
                counts.append("\(error)")
            }
        }
        XCTAssertEqual(counts.all, ["3", "3", "3", "3"], "every opener waited for the one migration and opened the migrated store")
    }
}
