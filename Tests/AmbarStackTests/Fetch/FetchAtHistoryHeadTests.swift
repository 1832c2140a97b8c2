import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A fetch read in one read with the ledger's head (what `serve` starts a snapshot stream
/// with): the objects are exactly those after the transactions up to the token it returns, for
/// several entities at once, on both backends.
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
            let (objects, token) = try reader.fetchAtHistoryHead([
                FetchRequest<ManagedObject>(entityName: "Reading", predicate: try ObjectPredicate(format: "celsius > 35")),
                FetchRequest<ManagedObject>(entityName: "Sensor"),
            ])
            XCTAssertEqual(objects.count, 2, "one list per request")
            let celsius = try objects[0].map { object -> Int64 in
                guard case .integer(let value) = try object.value(forKey: "celsius") else { return -1 }
                return value
            }
            let names = try objects[1].map { object -> String in
                guard case .string(let name) = try object.value(forKey: "name") else { return "?" }
                return name
            }
            return (celsius.sorted(), names, token)
        }
        XCTAssertEqual(celsius, [36, 40, 50])
        XCTAssertEqual(names, ["roof"])
        XCTAssertEqual(token, head, "the token of the last transaction the objects include")
    }
}
