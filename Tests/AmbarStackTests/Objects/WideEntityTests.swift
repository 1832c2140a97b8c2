import AmbarStack
import Foundation
import XCTest

/// An entity with more properties than fit the one-word change record (and more than the
/// attributes looked up by comparing names): changes to any of them are tracked, saved, merged
/// and reported like those of a small entity. Core Data models with 70 attributes exist.
final class WideEntityTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }
    private static let width = 70

    override func setUpWithError() throws {
        try super.setUpWithError()
        model = try ManagedObjectModel(entities: [
            EntityDescription("Wide", properties: (0..<Self.width).map { .attribute("a\($0)", .integer64, defaultValue: 0) })
        ])
        coordinator = try PersistentStoreCoordinator(model: model, store: try store("wide.sqlite"))
    }

    private func values(_ id: ManagedObjectID, _ keys: [Int]) throws -> [Int64] {
        let reader = privateContext("reader", on: try PersistentStoreCoordinator(model: model, store: try store("wide.sqlite")))
        return try reader.performAndWait {
            let object = try reader.existingObject(with: id)
            return try keys.map { key in
                guard case .integer(let value) = try object.value(forKey: "a\(key)") else { return -1 }
                return value
            }
        }
    }

    func testChangesBeyondTheSixtyFourthPropertyAreTrackedSavedAndMerged() throws {
        let context = privateContext()
        let id = try context.performAndWait { () throws -> ManagedObjectID in
            let object = try context.insertObject(entityName: "Wide")
            for key in [3, 20, 64, 65, 69] { try object.setValue(.integer(Int64(key * 10)), forKey: "a\(key)") }
            try context.save()
            return object.objectID
        }
        XCTAssertEqual(try values(id, [3, 20, 63, 64, 65, 69]), [30, 200, 0, 640, 650, 690])

        try context.performAndWait {
            let object = try context.existingObject(with: id)
            try object.setValue(.integer(6_600), forKey: "a66")
            try object.setValue(.integer(2), forKey: "a2")
            XCTAssertTrue(object.isUpdated)
            XCTAssertEqual(Set(object.changedValues().keys), ["a2", "a66"], "exactly the changed attributes, on both sides of the 64th")
        }

        // Another context changes a67 and a2 meanwhile; a refresh that keeps the local edits
        // takes its a67 and keeps our a2 and a66, and the save then writes ours.
        let other = privateContext("other")
        try other.performAndWait {
            let theirs = try other.existingObject(with: id)
            try theirs.setValue(.integer(6_700), forKey: "a67")
            try theirs.setValue(.integer(-2), forKey: "a2")
            try other.save()
        }
        try context.performAndWait {
            let object = try context.existingObject(with: id)
            // In memory first: the committed values arrive, the local edits stay on top.
            try context.refresh(object, mergeChanges: true)
            XCTAssertEqual(Set(object.changedValues().keys), ["a2", "a66"])
            XCTAssertEqual(try object.value(forKey: "a67"), .integer(6_700))
            XCTAssertEqual(try object.value(forKey: "a2"), .integer(2))
            try context.save()
            XCTAssertFalse(object.hasChanges)
        }
        XCTAssertEqual(try values(id, [2, 66, 67, 69]), [2, 6_600, 6_700, 690], "ours for a2 and a66, theirs for a67, the rest kept")
    }
}
