import AmbarStack
import Foundation
import XCTest

/// Which code may touch a private-queue context's objects: its blocks, code such a block runs
/// synchronously on its own thread, and no other thread — not a `Task` the block starts, which
/// would run beside it.
final class QueueConfinementTests: StoreTestCase {
    /// Code a block runs on its own thread through another queue's `sync` cannot run beside the
    /// block (which waits for it), so it acts for the context, as the block's callee.
    func testCodeABlockRunsSynchronouslyActsForItsContext() throws {
        let context = privateContext("confined")
        let other = DispatchQueue(label: "another queue")
        try context.performAndWait {
            let employee = try context.insert(Employee.self)
            let outcome = other.sync { () -> Result<Bool, AmbarError> in
                do throws(AmbarError) {
                    try employee.setValue(.string("set from the block's callee"), forKey: "name")
                    return .success(context.isOnQueue)
                } catch {
                    return .failure(error)
                }
            }
            XCTAssertEqual(try outcome.get(), true, "the context's block's own thread acts for it")
            XCTAssertEqual(try employee.value(forKey: "name"), .string("set from the block's callee"))
        }
    }

    /// A task started inside a block runs on another thread, beside the block: it inherits the
    /// block's task-local values but is not on the context's queue, and its sets are refused.
    func testATaskStartedInsideABlockIsRefused() throws {
        let context = privateContext("confined")
        try context.performAndWait {
            let employee = try context.insert(Employee.self)
            try employee.setValue(.string("on the queue"), forKey: "name")
            final class Outcome: @unchecked Sendable {
                var onQueue = true
                var error: AmbarError?
                let done = DispatchSemaphore(value: 0)
            }
            let outcome = Outcome()
            nonisolated(unsafe) let misused = employee
            let sameContext = context
            Task {
                outcome.onQueue = sameContext.isOnQueue
                do throws(AmbarError) {
                    try misused.setValue(.string("from a task"), forKey: "name")
                } catch {
                    outcome.error = error
                }
                outcome.done.signal()
            }
            outcome.done.wait()  // the task always signals
            XCTAssertFalse(outcome.onQueue, "a task started in the block is not on the context's queue")
            guard case .wrongQueue(let name, let operation)? = outcome.error else {
                return XCTFail("expected wrongQueue, got \(String(describing: outcome.error))")
            }
            XCTAssertEqual(name, "confined")
            XCTAssertEqual(operation, "setting Employee.name")
            XCTAssertEqual(try employee.value(forKey: "name"), .string("on the queue"), "a refused set was applied")
        }
    }

    /// Another thread while the block runs (and waits for it) is refused, and so is the test's
    /// thread once the block has ended.
    func testOtherThreadsAreRefused() throws {
        let context = privateContext("confined")
        let employee = try context.performAndWait { () throws(AmbarError) -> Employee in
            let employee = try context.insert(Employee.self)
            let refused = offTheBlocksThread { () -> AmbarError? in
                do throws(AmbarError) {
                    try employee.setValue(.string("from another thread"), forKey: "name")
                    return nil
                } catch {
                    return error
                }
            }
            guard case .wrongQueue? = refused else {
                XCTFail("expected wrongQueue, got \(String(describing: refused))")
                return employee
            }
            XCTAssertFalse(offTheBlocksThread { context.isOnQueue })
            return employee
        }
        XCTAssertFalse(context.isOnQueue)
        assertThrows({ try employee.setValue(.string("after the block"), forKey: "name") }) {
            if case .wrongQueue = $0 { return true }
            return false
        }
    }
}
