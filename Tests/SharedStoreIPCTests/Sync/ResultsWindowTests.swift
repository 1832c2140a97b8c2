import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// A results controller with a fetch limit (or offset) keeps showing the window a fresh fetch
/// would give while another process inserts, updates and deletes: never more rows than the limit.
final class ResultsWindowTests: SharedStoreTestCase {
    @MainActor
    func testALimitedControllerShowsWhatAFreshFetchShowsAfterOtherProcessesChanges() async throws {
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "window")
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
        let main = try stack.mainContext
        var request = FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [ObjectSortDescriptor(key: "value", ascending: false)])
        request.fetchLimit = 5
        request.fetchOffset = 2
        let controller = FetchedResultsController(fetchRequest: request, context: main)
        let changes = MainQueueLog()
        controller.onChange = { batch in changes.entries.append("\(batch.count)") }
        try controller.performFetch()
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }

        func uid(_ object: ManagedObject) -> String {
            if case .string(let uid)? = try? object.value(forKey: "uid") { return uid }
            return "?"
        }
        func shown() -> [String] { controller.fetchedObjects.map(uid) }
        func fresh() throws -> [String] { try main.fetch(request).map(uid) }
        // Merge events come on the main queue after the merge (and the controller's update).
        let merged = MainQueueLog()
        let merges = sync.observeRemoteMerges { merged.entries.append(String($0.token)) }
        defer { merges.cancel() }
        func settle(_ head: Int64) async throws {
            for _ in 0..<400 where (merged.entries.last.flatMap { Int64($0) } ?? 0) < head { try await Task.sleep(for: .milliseconds(25)) }
            XCTAssertEqual(merged.entries.last.flatMap { Int64($0) }, head, "merged into the main context")
        }

        let inserted = try XCTUnwrap(Int64(try writer.send("burst 40 n").dropFirst("ok ".count)))
        try await settle(inserted)
        XCTAssertEqual(controller.fetchedObjects.count, 5, "the window's size, not every inserted row")
        XCTAssertEqual(shown(), try fresh())
        // A delete inside the window brings in a row this process never loaded; an update moves one out.
        let first = try XCTUnwrap(shown().first)
        let deleted = try XCTUnwrap(Int64(try writer.send("delete \(first)").dropFirst("ok ".count)))
        try await settle(deleted)
        XCTAssertEqual(shown(), try fresh())
        let updated = try XCTUnwrap(Int64(try writer.send("update n30 -1").dropFirst("ok ".count)))
        try await settle(updated)
        XCTAssertEqual(shown(), try fresh())
        XCTAssertEqual(controller.fetchedObjects.count, 5)
        XCTAssertFalse(changes.entries.isEmpty, "the changes were reported")
        await sync.stop()
    }
}
