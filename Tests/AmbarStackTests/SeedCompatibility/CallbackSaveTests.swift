import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Ambar's `save(shouldPropagate:callback:)`.
final class CallbackSaveTests: XCTestCase {
    var directory: TemporaryDirectory!
    var stack: DataStack!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        stack = try DataStack.open(model: .model(try TestModel.make()), storeURL: directory.url, name: "callbacks")
    }

    override func tearDown() {
        stack = nil
        directory = nil
    }

    func storedCount() throws -> Int {
        let context = try stack.temporaryContext()
        return try context.performAndWait { try Employee.count(in: context, includePending: false) }
    }

    /// Saves `context` and waits until the chain settles; returns the callbacks' results.
    func save(_ context: ManagedObjectContext, propagate: Bool) -> [AmbarError?] {
        let calls = Locked<[AmbarError?]>([])
        let first = expectation(description: "callback")
        context.save(shouldPropagate: propagate) { error in
            let count = calls.withLock {
                $0.append(error)
                return $0.count
            }
            if count == 1 { first.fulfill() }
        }
        wait(for: [first], timeout: 10)
        // A second callback would come from the chain's queues: each is drained (a block run on it
        // after everything queued before), then the main queue, where the callbacks run.
        var link: ManagedObjectContext? = context
        while let current = link {
            current.performAndWait {}
            link = current.parent
        }
        let drained = expectation(description: "main queue drained")
        DispatchQueue.main.async { drained.fulfill() }
        wait(for: [drained], timeout: 10)
        return calls.withLock { $0 }
    }

    func testAnEditorChainCallsBackOnceWithTheDataOnDisk() throws {
        let editor = try stack.editorContext()
        try editor.performAndWait { try editor.insert(Employee.self).name = "E" }
        let calls = save(editor, propagate: true)
        XCTAssertEqual(calls.count, 1)
        XCTAssertNil(calls.first ?? nil)
        XCTAssertEqual(try storedCount(), 1)
    }

    func testWithoutPropagationTheParentKeepsTheChanges() throws {
        let editor = try stack.editorContext()
        try editor.performAndWait { try editor.insert(Employee.self).name = "E" }
        XCTAssertEqual(save(editor, propagate: false).count, 1)
        XCTAssertTrue(try stack.mainContext.hasChanges)
        XCTAssertEqual(try storedCount(), 0)
    }

    func testAContextWithoutChangesCallsBackOnceAndLeavesItsParent() throws {
        let main = try stack.mainContext
        try main.insert(Employee.self).name = "pending in main"
        let editor = try stack.editorContext()
        XCTAssertEqual(save(editor, propagate: true).count, 1)
        XCTAssertTrue(main.hasChanges, "the parent was not saved")
        XCTAssertEqual(try storedCount(), 0)
    }

    func testAnErrorStopsTheChain() throws {
        let editor = try stack.editorContext()
        try editor.performAndWait { try editor.insert(Employee.self).setValue(.null, forKey: "name") }
        let calls = save(editor, propagate: true)
        XCTAssertEqual(calls.count, 1)
        guard case .validation = calls.first ?? nil else { return XCTFail("\(calls)") }
        XCTAssertEqual(try storedCount(), 0)
    }
}
