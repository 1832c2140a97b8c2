import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// The item entity as a class, for the typed monitors.
final class Item: ManagedObject, StringIdentified {
    @Managed("uid") var uid: String
    @Managed("value") var value: Int64
    static var idStringKey: String { "uid" }
    var idString: String {
        get { uid }
        set { uid = newValue }
    }
}

/// Monitors and typed collections on a main context react to saves made in another process.
final class CrossProcessMonitorTests: SharedStoreTestCase {
    @MainActor
    func testMonitorsSeeAnotherProcessesInsertUpdateAndDelete() async throws {
        let stack = try DataStack.open(model: .model(try itemModel()), classes: [Item.self], storeURL: directory.store, name: "monitored")
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
        let main = try stack.mainContext
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }

        let inserted = expectation(description: "the entity monitor sees the other process's insert")
        let reports = MainQueueLog()
        let entityMonitor = EntityMonitor<Item>(context: main, predicate: Key<Int64>("value") >= 0) { ins, upd, del in
            reports.entries.append("+\(ins.map(\.uid).sorted()) ~\(upd.map(\.uid).sorted()) -\(del.count)")
            if ins.contains(where: { $0.uid == "u1" }) { inserted.fulfill() }
        }
        let collection = ObjectCollection<Item>(context: main)
        let controller = collection.allObjects()
        try controller.performFetch()
        XCTAssertTrue(controller.fetchedObjects.isEmpty)
        XCTAssertTrue(try writer.send("insert u1 1").hasPrefix("ok "))
        await fulfillment(of: [inserted], timeout: 20)
        XCTAssertEqual(controller.fetchedObjects.map(\.idString), ["u1"], "the collection's controller has the other process's insert")
        XCTAssertEqual(try collection.existingObject(idString: "u1")?.value, 1)

        let updated = expectation(description: "the set monitor sees the update")
        let deleted = expectation(description: "the set monitor sees the delete")
        let item = try XCTUnwrap(try Item.fetch(in: main, predicate: Key<String>("uid") == "u1").first)
        XCTAssertEqual(item.value, 1)
        let setMonitor = try ManagedSetMonitor(objects: [item]) { upd, del in
            if upd.first?.value == 7 { updated.fulfill() }
            if !del.isEmpty { deleted.fulfill() }
        }
        XCTAssertTrue(try writer.send("update u1 7").hasPrefix("ok "))
        await fulfillment(of: [updated], timeout: 20)
        XCTAssertTrue(try writer.send("delete u1").hasPrefix("ok "))
        await fulfillment(of: [deleted], timeout: 20)
        XCTAssertTrue(setMonitor.objects.isEmpty, "the deleted item left the watched set")
        XCTAssertTrue(reports.entries.contains("+[] ~[] -1"), "the entity monitor saw the delete too: \(reports.entries)")
        XCTAssertTrue(reports.entries.contains("+[] ~[\"u1\"] -0"), "and the update: \(reports.entries)")
        XCTAssertEqual(try Item.count(in: main), 0)
        withExtendedLifetime(entityMonitor) {}
        XCTAssertEqual(try writer.send("quit"), "bye")
        await sync.stop()
    }
}

extension CrossProcessMonitorTests {
    /// A results controller fetched before sharing started still gets what another process
    /// committed between that fetch and the start (the start re-reads the main context once).
    @MainActor
    func testWhatWasLoadedBeforeSharingStartedIsBroughtUpToDate() async throws {
        let stack = try DataStack.open(model: .model(try itemModel()), classes: [Item.self], storeURL: directory.store, name: "early")
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }
        XCTAssertTrue(try writer.send("insert kept 1").hasPrefix("ok "))
        XCTAssertTrue(try writer.send("insert gone 1").hasPrefix("ok "))
        let main = try stack.mainContext
        let controller = ObjectCollection<Item>(context: main).allObjects()
        try controller.performFetch()
        XCTAssertEqual(controller.fetchedObjects.map(\.idString).sorted(), ["gone", "kept"])
        _ = controller.fetchedObjects.map(\.value)

        // Committed after the fetch, before this process shares: no message will ever say so.
        XCTAssertTrue(try writer.send("insert late 3").hasPrefix("ok "))
        XCTAssertTrue(try writer.send("update kept 2").hasPrefix("ok "))
        XCTAssertTrue(try writer.send("delete gone").hasPrefix("ok "))
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
        var waited = 0
        while controller.fetchedObjects.map(\.idString).sorted() != ["kept", "late"] && waited < 200 {
            try await Task.sleep(nanoseconds: 50_000_000)
            waited += 1
        }
        XCTAssertEqual(controller.fetchedObjects.map(\.idString).sorted(), ["kept", "late"])
        XCTAssertEqual(controller.fetchedObjects.map(\.value).sorted(), [2, 3])
        await sync.stop()
    }
}

/// Report lines, appended on the main queue only.
final class MainQueueLog: @unchecked Sendable {
    var entries: [String] = []
}
