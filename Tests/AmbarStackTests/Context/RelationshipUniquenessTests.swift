import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Uniqueness constraints that name a to-one relationship (`[["owner", "name"]]`), as Core Data
/// allows: one item of a name per owner. Collisions with stored rows and between new objects
/// (whose owner is new too) follow the merge policy; a nil owner never collides; a refused save
/// writes nothing; the constraint holds for updates and for large inserts too.
final class RelationshipUniquenessTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Owner", properties: [.attribute("name", .string), .toMany("items", "Item", inverse: "owner")]),
            EntityDescription(
                "Item",
                properties: [.attribute("name", .string), .attribute("note", .string, optional: true), .toOne("owner", "Owner", inverse: "items")],
                uniquenessConstraints: [["owner", "name"]]),
        ])
    }

    private func context(_ coordinator: PersistentStoreCoordinator, _ policy: MergePolicy = .error) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.mergePolicy = policy
        return context
    }

    private func item(_ context: ManagedObjectContext, _ name: String, owner: ManagedObject?, note: String? = nil) throws -> ManagedObject {
        let item = try context.insertObject(entityName: "Item")
        try item.setValue(name, forKey: "name")
        try item.setValue(note.map { AttributeValue.string($0) } ?? .null, forKey: "note")
        if let owner { try item.setObject(owner, forKey: "owner") }
        return item
    }

    /// "owner/name/note" for every stored item, sorted.
    private func stored(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
        let reader = context(coordinator)
        return try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item")).map { item -> String in
                func text(_ value: AttributeValue) -> String {
                    guard case .string(let s) = value else { return "-" }
                    return s
                }
                let owner = try item.object(forKey: "owner").map { try text($0.value(forKey: "name")) } ?? "-"
                return "\(owner)/\(text(try item.value(forKey: "name")))/\(text(try item.value(forKey: "note")))"
            }.sorted()
        }
    }

    func testOneItemOfANamePerOwnerUnderEachPolicy() throws {
        let coordinator = try PersistentStoreCoordinator(model: try model(), store: try store("unique-owner.sqlite"))
        let setup = context(coordinator)
        let (ann, first) = try setup.performAndWait { () throws -> (ManagedObjectID, ManagedObjectID) in
            let ann = try setup.insertObject(entityName: "Owner")
            try ann.setValue("ann", forKey: "name")
            let bob = try setup.insertObject(entityName: "Owner")
            try bob.setValue("bob", forKey: "name")
            let first = try item(setup, "x", owner: ann, note: "first")
            _ = try item(setup, "x", owner: bob)
            _ = try item(setup, "x", owner: nil)
            _ = try item(setup, "x", owner: nil)  // nil never collides
            try setup.save()
            return (ann.objectID, first.objectID)
        }
        XCTAssertEqual(try stored(coordinator), ["-/x/-", "-/x/-", "ann/x/first", "bob/x/-"])

        // .error: the save is refused, naming the constraint, the values and the holder.
        let refused = context(coordinator)
        try refused.performAndWait {
            let owner = try refused.existingObject(with: ann)
            _ = try item(refused, "x", owner: owner, note: "second")
            XCTAssertThrowsError(try refused.save()) { error in
                guard case .constraintViolation(let entity, let attributes, let values, let holder) = error as? AmbarError else {
                    return XCTFail("\(error)")
                }
                XCTAssertEqual(entity, "Item")
                XCTAssertEqual(attributes, ["owner", "name"])
                XCTAssertEqual(values, [.url(ann.uriRepresentation), .string("x")])
                XCTAssertEqual(holder, first)
            }
        }
        XCTAssertEqual(try stored(coordinator).count, 4, "nothing written")

        // Object trump: the new object becomes the stored one, with its values.
        let trump = context(coordinator, .mergeByPropertyObjectTrump)
        try trump.performAndWait {
            let duplicate = try item(trump, "x", owner: try trump.existingObject(with: ann), note: "second")
            try trump.save()
            XCTAssertEqual(duplicate.objectID, first)
        }
        XCTAssertEqual(try stored(coordinator).filter { $0.hasPrefix("ann/") }, ["ann/x/second"])

        // Two new items of one new owner in one save: the later one is kept (object trump).
        try trump.performAndWait {
            let cy = try trump.insertObject(entityName: "Owner")
            try cy.setValue("cy", forKey: "name")
            _ = try item(trump, "y", owner: cy, note: "one")
            _ = try item(trump, "y", owner: cy, note: "two")
            try trump.save()
        }
        XCTAssertEqual(try stored(coordinator).filter { $0.hasPrefix("cy/") }, ["cy/y/two"])

        // An update that moves an item onto a taken (owner, name) is refused too.
        let mover = context(coordinator)
        try mover.performAndWait {
            let bobs = try mover.fetch(FetchRequest<ManagedObject>(entityName: "Item", predicate: Key<String>("owner.name") == "bob"))
            let bobsItem = try XCTUnwrap(bobs.first)
            try bobsItem.setObject(try mover.existingObject(with: ann), forKey: "owner")
            XCTAssertThrowsError(try mover.save()) { error in
                guard case .constraintViolation(_, let attributes, _, _) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertEqual(attributes, ["owner", "name"])
            }
        }
        XCTAssertEqual(try stored(coordinator).filter { $0.hasPrefix("bob/") }, ["bob/x/-"])
    }

    /// A large insert-only save writes first and looks up holders only when a row is refused.
    func testALargeInsertCollidingOnAnOwnersItemIsResolvedLikeASmallOne() throws {
        let coordinator = try PersistentStoreCoordinator(model: try model(), store: try store("unique-owner-large.sqlite"))
        let setup = context(coordinator)
        let (ann, first) = try setup.performAndWait { () throws -> (ManagedObjectID, ManagedObjectID) in
            let ann = try setup.insertObject(entityName: "Owner")
            try ann.setValue("ann", forKey: "name")
            let first = try item(setup, "taken", owner: ann, note: "first")
            try setup.save()
            return (ann.objectID, first.objectID)
        }
        let bulk = context(coordinator)
        try bulk.performAndWait {
            let owner = try bulk.existingObject(with: ann)
            for i in 0..<1_200 { _ = try item(bulk, i == 600 ? "taken" : "n\(i)", owner: owner) }
            XCTAssertThrowsError(try bulk.save()) { error in
                guard case .constraintViolation(_, let attributes, _, let holder) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertEqual(attributes, ["owner", "name"])
                XCTAssertEqual(holder, first)
            }
        }
        XCTAssertEqual(try stored(coordinator), ["ann/taken/first"], "a refused save writes nothing")
        bulk.mergePolicy = .mergeByPropertyStoreTrump
        try bulk.performAndWait { try bulk.save() }
        XCTAssertEqual(try stored(coordinator).count, 1_200)
        XCTAssertEqual(try stored(coordinator).filter { $0.hasPrefix("ann/taken/") }, ["ann/taken/first"])
    }

    func testAConstraintOnAToManyOrUnknownNameIsRefusedWhenTheModelLoads() throws {
        for (group, reason) in [(["items"], "to-many relationship"), (["nothing"], "neither an attribute nor a to-one relationship")] {
            XCTAssertThrowsError(
                try ManagedObjectModel(entities: [
                    EntityDescription(
                        "Owner", properties: [.attribute("name", .string), .toMany("items", "Item", inverse: "owner")], uniquenessConstraints: [group]),
                    EntityDescription("Item", properties: [.attribute("name", .string), .toOne("owner", "Owner", inverse: "items")]),
                ])
            ) { error in
                XCTAssertTrue("\(error)".contains(reason), "\(group): \(error)")
            }
        }
    }
}
