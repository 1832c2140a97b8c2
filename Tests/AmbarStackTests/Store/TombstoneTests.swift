import AmbarStack
import Foundation
import XCTest

/// Tombstones: the ledger keeps the values of a deleted object's attributes that preserve them,
/// read from the store just before the deletion, and gives them with the deleting transaction.
final class TombstoneTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Reading",
                properties: [
                    .attribute("sensor", .string, preservesValueOnDeletion: true),
                    .attribute("value", .double, preservesValueOnDeletion: true),
                    .attribute("note", .string, optional: true),
                    .attribute("takenAt", .date, optional: true, preservesValueOnDeletion: true),
                ])
        ])
    }

    func testADeletionKeepsThePreservedValuesAsTheStoreHeldThem() throws {
        let coordinator = try PersistentStoreCoordinator(model: try model(), store: try store("tombstones.sqlite"))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let (kept, gone): (ManagedObjectID, ManagedObjectID) = try context.performAndWait {
            let kept = try context.insertObject(entityName: "Reading")
            try kept.setValue("attic", forKey: "sensor")
            try kept.setValue(1.5, forKey: "value")
            let gone = try context.insertObject(entityName: "Reading")
            try gone.setValue("boiler", forKey: "sensor")
            try gone.setValue(Double.nan, forKey: "value")
            try gone.setValue("hot", forKey: "note")
            try context.save()
            return (kept.objectID, gone.objectID)
        }
        // Another context changes the value; the deleting one still holds the old: the store's wins.
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try other.performAndWait { () throws in
            try other.existingObject(with: gone).setValue(-40.25, forKey: "value")
            try other.save()
        }
        try context.performAndWait { () throws in
            context.mergePolicy = .mergeByPropertyObjectTrump
            try context.delete(try context.existingObject(with: gone))
            try context.save()
        }

        let history = try coordinator.history(after: 0)
        XCTAssertEqual(history.count, 3)
        XCTAssertEqual(history[2].deleted, [gone])
        XCTAssertEqual(history[2].tombstones[gone], ["sensor": .string("boiler"), "value": .double(-40.25), "takenAt": .null])
        XCTAssertNil(history[2].tombstones[kept])
        XCTAssertTrue(history[0].tombstones.isEmpty && history[1].tombstones.isEmpty)
    }

    func testAnInfiniteValueIsKept() throws {
        let coordinator = try PersistentStoreCoordinator(model: try model(), store: try store("nan.sqlite"))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let id: ManagedObjectID = try context.performAndWait {
            let reading = try context.insertObject(entityName: "Reading")
            try reading.setValue("boiler", forKey: "sensor")
            try reading.setValue(-Double.infinity, forKey: "value")
            try context.save()
            try context.delete(reading)
            try context.save()
            return reading.objectID
        }
        let tombstone = try XCTUnwrap(coordinator.history(after: 0).last?.tombstones[id])
        XCTAssertEqual(tombstone["value"], .double(-.infinity), "JSON has no infinity; the ledger keeps it all the same")
    }

    func testPreservingValuesIsNotAModelChange() throws {
        let plain = try ManagedObjectModel(entities: [
            EntityDescription(
                "Reading",
                properties: [
                    .attribute("sensor", .string), .attribute("value", .double), .attribute("note", .string, optional: true),
                    .attribute("takenAt", .date, optional: true),
                ])
        ])
        XCTAssertEqual(plain.versionHash, try model().versionHash, "a store made without tombstones opens with them, unmigrated")
    }

    func testARenameMigrationRenamesTheKeptValues() throws {
        if backend == .postgres { throw XCTSkip("a PostgreSQL store refuses renames (it migrates additions only)") }
        let description = try store("renamed.sqlite")
        let id: ManagedObjectID = try {
            let coordinator = try PersistentStoreCoordinator(model: try model(), store: description)
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            return try context.performAndWait {
                let reading = try context.insertObject(entityName: "Reading")
                try reading.setValue("cellar", forKey: "sensor")
                try reading.setValue(3.0, forKey: "value")
                try context.save()
                try context.delete(reading)
                try context.save()
                return reading.objectID
            }
        }()
        let renamed = try ManagedObjectModel(entities: [
            EntityDescription(
                "Reading",
                properties: [
                    .attribute("probe", .string, renamedFrom: "sensor", preservesValueOnDeletion: true),
                    .attribute("value", .double, preservesValueOnDeletion: true), .attribute("note", .string, optional: true),
                    .attribute("takenAt", .date, optional: true, preservesValueOnDeletion: true),
                ])
        ])
        let coordinator = try PersistentStoreCoordinator(model: renamed, store: description)
        let tombstone = try XCTUnwrap(coordinator.history(after: 0).last?.tombstones.first?.value)
        XCTAssertEqual(id.entityName, "Reading")
        XCTAssertEqual(tombstone, ["probe": .string("cellar"), "value": .double(3), "takenAt": .null])
    }
}
