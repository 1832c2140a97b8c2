import AmbarStack
import Foundation
import XCTest

/// Object IDs compare and hash by their store, entity and key, however they were made: read
/// from a fetch, parsed from a URI, or reported by a save. (IDs keep their store and entity as
/// one shared reference, so these are the cases where two separately made IDs must still meet.)
final class ObjectIDIdentityTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testAnIDFromAURIIsTheSameKeyAsTheFetchedOneInSetsAndDictionaries() throws {
        let context = privateContext()
        let saved = try context.performAndWait { () throws -> ManagedObjectID in
            let department = try context.insert(Department.self)
            department.name = "Sales"
            try context.save()
            return department.objectID
        }
        let parsed = try ManagedObjectID(uriString: saved.uriString)
        XCTAssertEqual(parsed, saved)
        XCTAssertEqual(parsed.hashValue, saved.hashValue)
        XCTAssertEqual(parsed.entityName, "Department")
        XCTAssertEqual(parsed.storeIdentifier, saved.storeIdentifier)

        let reader = privateContext("reader")
        let fetched = try reader.performAndWait { try reader.fetch(FetchRequest<Department>()).map(\.objectID) }
        XCTAssertEqual(fetched, [saved])
        let byID: [ManagedObjectID: String] = [fetched[0]: "fetched"]
        XCTAssertEqual(byID[parsed], "fetched", "a parsed ID finds the entry of a fetched one")
        XCTAssertTrue(Set([saved, parsed, fetched[0]]).count == 1)

        let registered = reader.performAndWait { reader.registeredObject(for: parsed)?.objectID }
        XCTAssertEqual(registered, saved, "the context finds its object by an ID parsed from text")
    }

    func testIDsDifferByStoreEntityAndKey() throws {
        let store = UUID().uuidString
        let other = UUID().uuidString
        let id = try ManagedObjectID(uriString: "ambar://\(store)/Employee/p7")
        XCTAssertEqual(id, try ManagedObjectID(uriString: "ambar://\(store)/Employee/p7"))
        XCTAssertNotEqual(id, try ManagedObjectID(uriString: "ambar://\(other)/Employee/p7"), "another store")
        XCTAssertNotEqual(id, try ManagedObjectID(uriString: "ambar://\(store)/Manager/p7"), "another entity")
        XCTAssertNotEqual(id, try ManagedObjectID(uriString: "ambar://\(store)/Employee/p8"), "another key")
        let set: Set<ManagedObjectID> = [
            id, try ManagedObjectID(uriString: "ambar://\(other)/Employee/p7"),
            try ManagedObjectID(uriString: "ambar://\(store)/Manager/p7"), try ManagedObjectID(uriString: "ambar://\(store)/Employee/p7"),
        ]
        XCTAssertEqual(set.count, 3)
    }

    func testATemporaryIDNeverEqualsThePermanentOneItBecomes() throws {
        let context = privateContext()
        try context.performAndWait {
            let project = try context.insert(Project.self)
            project.title = "Roof"
            let temporary = project.objectID
            XCTAssertTrue(temporary.isTemporaryID)
            XCTAssertEqual(temporary.entityName, "Project")
            XCTAssertEqual(temporary.storeIdentifier, "")
            try context.save()
            let permanent = project.objectID
            XCTAssertFalse(permanent.isTemporaryID)
            XCTAssertNotEqual(temporary, permanent)
            XCTAssertEqual(permanent.entityName, "Project")
            XCTAssertEqual(permanent, try ManagedObjectID(uriString: permanent.uriString))
            XCTAssertTrue(context.registeredObject(for: permanent) === project)
            XCTAssertNil(context.registeredObject(for: temporary))
        }
    }
}
