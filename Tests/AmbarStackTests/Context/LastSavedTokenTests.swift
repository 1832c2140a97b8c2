import AmbarStack
import Foundation
import XCTest

/// `ManagedObjectContext.lastSavedToken`: the ledger token of a context's last save that reached
/// the store, the one its did-save notification carries.
final class LastSavedTokenTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testAStoreSaveRecordsItsTokenAndASaveWithoutChangesKeepsIt() throws {
        let context = privateContext("saver")
        XCTAssertNil(context.lastSavedToken)
        let announced = Locked<Int64?>(nil)
        let observation = context.observeDidSave { note in announced.withLock { $0 = note.token } }
        defer { observation.cancel() }
        try context.performAndWait {
            try context.insert(Employee.self).name = "Ada"
            try context.save()
        }
        let first = try XCTUnwrap(context.lastSavedToken)
        XCTAssertEqual(first, announced.withLock { $0 }, "the did-save notification's token")
        XCTAssertEqual(first, try coordinator.currentHistoryToken(), "the ledger's head")
        try context.performAndWait { try context.save() }
        XCTAssertEqual(context.lastSavedToken, first, "a save with nothing to write keeps it")
        try context.performAndWait {
            try context.insert(Employee.self).name = "Bob"
            try context.save()
        }
        XCTAssertEqual(context.lastSavedToken, first + 1)
    }

    func testAChildSavedIntoItsParentHasNoTokenUntilItPropagatesToTheStore() throws {
        let parent = privateContext("parent")
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent, name: "child")
        try child.performAndWait {
            try child.insert(Employee.self).name = "Ada"
            try child.save()
        }
        XCTAssertNil(child.lastSavedToken, "saved into the parent, not the store")
        XCTAssertNil(parent.lastSavedToken)
        try child.performAndWait {
            try child.insert(Employee.self).name = "Bob"
            try child.save(propagating: true)
        }
        let token = try XCTUnwrap(parent.lastSavedToken)
        XCTAssertEqual(child.lastSavedToken, token, "the root's save, reached through propagation")
        XCTAssertEqual(token, try coordinator.currentHistoryToken())
    }
}
