import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A store file replaced under an open stack: every write refuses (nothing reaches the replaced
/// file), and `verifyStoreIdentity()` says so, with the path.
final class StoreReplacedTests: XCTestCase {
    func testWritesToAReplacedStoreFileAreRefusedAndWriteNothing() throws {
        let directory = try TemporaryDirectory()
        let model = try itemModel()
        let path = directory.url.appendingPathComponent("store.sqlite")
        let stack = try DataStack.open(model: .model(model), storeURL: path, name: "replaced")
        let coordinator = try stack.mainCoordinator
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "writer")
        try context.performAndWait { () throws in
            let item = try context.insertObject(entityName: "Item")
            try item.setValue("a", forKey: "uid")
            try context.save()
        }
        try coordinator.verifyStoreIdentity()

        // Another store moved to the path, as a hand-made restore would.
        let other = directory.url.appendingPathComponent("other.sqlite")
        _ = try PersistentStoreCoordinator(model: model, store: .sqlite(other))
        for suffix in ["", "-wal", "-shm"] { unlink(path.path + suffix) }
        XCTAssertEqual(rename(other.path, path.path), 0)

        XCTAssertThrowsError(try coordinator.verifyStoreIdentity()) { error in
            guard case .storeReplaced(let at) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertEqual(at, path.path)
        }
        try context.performAndWait { () throws in
            let item = try context.insertObject(entityName: "Item")
            try item.setValue("b", forKey: "uid")
            XCTAssertThrowsError(try context.save()) { error in
                guard case .storeReplaced = error as? AmbarError else { return XCTFail("\(error)") }
            }
            XCTAssertTrue(context.hasChanges, "the context keeps its changes")
        }
        let fresh = try PersistentStoreCoordinator(model: model, store: .sqlite(path))
        XCTAssertEqual(try fresh.currentHistoryToken(), 0, "nothing was written to the store now at the path")
    }
}
