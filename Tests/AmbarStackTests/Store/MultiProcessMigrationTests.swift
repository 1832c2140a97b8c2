import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Migration with several real processes: openers racing with the migrating one all end on the
/// migrated store, and a process still on the old model gets the clear error on its next save.
final class MultiProcessMigrationTests: XCTestCase {
    func testRacingOpenersAndAnOldModelProcess() throws {
        signal(SIGPIPE, SIG_IGN)
        let directory = try TemporaryDirectory()
        let store = directory.file("shared.sqlite")
        let v1 = try ManagedObjectModel(entities: [EntityDescription("Item", properties: [.attribute("name", .string)])])
        let v2 = try ManagedObjectModel(entities: [
            EntityDescription(
                "Item",
                properties: [
                    .attribute("name", .string), .attribute("rank", .integer64, defaultValue: 1),
                ])
        ])
        let v1File = directory.file("v1.json")
        let v2File = directory.file("v2.json")
        try JSONEncoder().encode(v1).write(to: v1File)
        try JSONEncoder().encode(v2).write(to: v2File)

        let old = try OpenerProcess(model: v1File, store: store)
        XCTAssertEqual(old.line(), "opened \(v1.versionHash)")
        XCTAssertEqual(try old.send("insert before"), "ok")

        // Three processes start on the new model at once: one migrates, the others wait for it.
        let openers = try (0..<3).map { _ in try OpenerProcess(model: v2File, store: store) }
        for opener in openers { XCTAssertEqual(opener.line(), "opened \(v2.versionHash)") }
        for (i, opener) in openers.enumerated() { XCTAssertEqual(try opener.send("insert new\(i)"), "ok") }

        let refused = try old.send("insert late")
        XCTAssertTrue(refused.hasPrefix("error ") && refused.contains("migrated to a newer model"), refused)
        let reopened = try OpenerProcess(model: v1File, store: store)
        XCTAssertTrue(reopened.line().contains("migrated to a newer model"), "a new process on the old model is refused too")

        let check = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: v2, store: .sqlite(store)))
        try check.performAndWait { () throws in
            let items = try check.fetch(FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [Key<String>("name").sorted()]))
            XCTAssertEqual(
                try items.map { try $0.value(forKey: "name") }, ["before", "new0", "new1", "new2"].map { .string($0) },
                "nothing lost, nothing written by the old process")
            XCTAssertEqual(try items[0].value(forKey: "rank"), .integer(1))
        }
        for opener in openers + [old] { XCTAssertEqual(try opener.send("quit"), "bye") }
    }
}
