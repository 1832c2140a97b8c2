import AmbarStack
import Foundation
import XCTest

/// `save(movingConsumer:from:to:)`: a durable consumer's effects and its position commit in one
/// transaction, and the position moves only from where it was read.
final class ConsumerPositionTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private func insert(_ name: String, in context: ManagedObjectContext) throws(AmbarError) {
        let employee = try context.insert(Employee.self)
        employee.name = name
    }

    func testTheEffectsAndThePositionCommitTogether() throws {
        let writer = privateContext("writer")
        try writer.performAndWait { () throws(AmbarError) in
            try insert("source", in: writer)
            try writer.save()
        }
        let context = privateContext("consumer")
        try context.performAndWait { () throws(AmbarError) in
            try insert("effect-1", in: context)
            try context.save(movingConsumer: "alerter", from: nil, to: 1)
        }
        let cursor = try XCTUnwrap(try coordinator.historyCursor(consumer: "alerter"))
        XCTAssertEqual(cursor.token, 1)
        XCTAssertTrue(cursor.isDurable)
        XCTAssertEqual(try coordinator.history(after: 1).count, 1, "the effect is a transaction of its own in the ledger")

        // The same move again, from the position it no longer has: refused, nothing written.
        try context.performAndWait { () throws(AmbarError) in
            try insert("effect-1-again", in: context)
            XCTAssertThrowsError(try context.save(movingConsumer: "alerter", from: nil, to: 1)) { error in
                XCTAssertEqual(error as? AmbarError, .consumerPositionMoved(consumer: "alerter", expected: nil, found: 1))
            }
            XCTAssertThrowsError(try context.save(movingConsumer: "alerter", from: 0, to: 1)) { error in
                XCTAssertEqual(error as? AmbarError, .consumerPositionMoved(consumer: "alerter", expected: 0, found: 1))
            }
            XCTAssertTrue(context.hasChanges, "a refused save keeps the context's changes")
            try context.rollback()
            // From where it is, it moves; without changes the position moves alone.
            try context.save(movingConsumer: "alerter", from: 1, to: 2)
        }
        XCTAssertEqual(try coordinator.historyCursor(consumer: "alerter")?.token, 2)
        XCTAssertEqual(try coordinator.currentHistoryToken(), 2, "moving the position alone writes no ledger transaction")
        let names = try context.performAndWait { () throws(AmbarError) in
            try context.fetch(FetchRequest<Employee>()).map(\.name).sorted()
        }
        XCTAssertEqual(names, ["effect-1", "source"], "nothing of the refused saves was written")
    }

    func testARemovedConsumerIsToldAndMoveConsumerChecksToo() throws {
        try coordinator.moveConsumer("mailer", from: nil, to: 0)
        try coordinator.moveConsumer("mailer", from: 0, to: 0)
        try coordinator.removeHistoryCursor(consumer: "mailer")
        XCTAssertThrowsError(try coordinator.moveConsumer("mailer", from: 0, to: 1)) { error in
            XCTAssertEqual(error as? AmbarError, .consumerPositionMoved(consumer: "mailer", expected: 0, found: nil))
        }
        XCTAssertTrue(
            (AmbarError.consumerPositionMoved(consumer: "mailer", expected: 0, found: nil)).description.contains("was removed"))
        // A merge position of that name is not a durable consumer's: the move is refused, naming
        // it (not as a move to where the consumer already was, which it would retry for ever).
        try coordinator.setHistoryCursor(consumer: "viewer-1", token: 0, lease: 120)
        XCTAssertThrowsError(try coordinator.moveConsumer("viewer-1", from: 0, to: 1)) { error in
            XCTAssertEqual(error as? AmbarError, .consumerNameTaken(consumer: "viewer-1", lease: 120))
            XCTAssertTrue("\(error)".contains("merge position"), "\(error)")
        }
        let context = privateContext("consumer")
        try context.performAndWait { () throws(AmbarError) in
            try insert("effect", in: context)
            XCTAssertThrowsError(try context.save(movingConsumer: "viewer-1", from: 0, to: 1)) { error in
                XCTAssertEqual(error as? AmbarError, .consumerNameTaken(consumer: "viewer-1", lease: 120))
            }
            XCTAssertTrue(context.hasChanges, "a refused save keeps the context's changes")
        }
        XCTAssertEqual(try coordinator.historyCursor(consumer: "viewer-1")?.token, 0)
    }

    func testAChildContextRefusesToMoveAPosition() throws {
        let parent = privateContext("parent")
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent, name: "child")
        try child.performAndWait { () throws(AmbarError) in
            try insert("x", in: child)
            XCTAssertThrowsError(try child.save(movingConsumer: "c", from: nil, to: 0)) { error in
                guard case AmbarError.saveRefused = error else { return XCTFail("\(error)") }
            }
        }
        XCTAssertNil(try coordinator.historyCursor(consumer: "c"))
    }
}
