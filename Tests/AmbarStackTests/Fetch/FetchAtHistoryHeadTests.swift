import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// The IDs of a fetch read in one read with the ledger's head (what `serve` starts a snapshot
/// stream with): exactly the objects that matched after the transactions up to the token it
/// returns, for several entities at once, on both backends; their values read by ID after, in one
/// read, with a deleted object left out.
final class FetchAtHistoryHeadTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testTheObjectsAndTheTokenAreOneMoment() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription("Reading", properties: [.attribute("celsius", .integer64)]),
            EntityDescription("Sensor", properties: [.attribute("name", .string)]),
        ])
        let coordinator = try PersistentStoreCoordinator(model: model, store: try store("head.sqlite"))
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try writer.performAndWait {
            for celsius in [20, 36, 40] { try writer.insertObject(entityName: "Reading").setValue(.integer(Int64(celsius)), forKey: "celsius") }
            try writer.insertObject(entityName: "Sensor").setValue(.string("roof"), forKey: "name")
            try writer.save()
            try writer.insertObject(entityName: "Reading").setValue(.integer(50), forKey: "celsius")
            try writer.save()
        }
        let head = try coordinator.currentHistoryToken()
        XCTAssertGreaterThan(head, 0)
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let (celsius, names, token) = try reader.performAndWait { () throws -> ([Int64], [String], Int64) in
            let (ids, token) = try reader.fetchObjectIDsAtHistoryHead([
                FetchRequest<ManagedObject>(entityName: "Reading", predicate: try ObjectPredicate(format: "celsius > 35")),
                FetchRequest<ManagedObject>(entityName: "Sensor"),
            ])
            XCTAssertEqual(ids.count, 2, "one list per request")
            let celsius = try reader.existingObjects(ids[0]).map { object -> Int64 in
                guard case .integer(let value) = try object.value(forKey: "celsius") else { return -1 }
                return value
            }
            let names = try reader.existingObjects(ids[1]).map { object -> String in
                guard case .string(let name) = try object.value(forKey: "name") else { return "?" }
                return name
            }
            return (celsius.sorted(), names, token)
        }
        XCTAssertEqual(celsius, [36, 40, 50])
        XCTAssertEqual(names, ["roof"])
        XCTAssertEqual(token, head, "the token of the last transaction the objects include")
    }

    func testObjectsReadByIDLeaveOutTheDeleted() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription("Reading", properties: [.attribute("celsius", .integer64)])])
        let coordinator = try PersistentStoreCoordinator(model: model, store: try store("deleted.sqlite"))
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try writer.performAndWait {
            for celsius in [1, 2, 3] { try writer.insertObject(entityName: "Reading").setValue(.integer(Int64(celsius)), forKey: "celsius") }
            try writer.save()
        }
        let ids = try reader.performAndWait { try reader.fetchObjectIDsAtHistoryHead([FetchRequest<ManagedObject>(entityName: "Reading")]).ids[0] }
        XCTAssertEqual(ids.count, 3)
        try writer.performAndWait {
            try writer.delete(try writer.existingObject(with: ids[1]))
            try writer.save()
        }
        let found = try reader.performAndWait { try reader.existingObjects(ids).map(\.objectID) }
        XCTAssertEqual(found, [ids[0], ids[2]], "in the order asked, without the deleted one")
    }
}
