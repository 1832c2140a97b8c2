import AmbarStack
import Foundation
import XCTest

/// The transactional outbox: messages recorded on a context are written with the consumer's
/// position move, in its transaction — all of them or none — with keys derived from the token,
/// and stay until removed.
final class OutboxTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private func insert(_ name: String, in context: ManagedObjectContext) throws(AmbarError) {
        let employee = try context.insert(Employee.self)
        employee.name = name
    }

    private func names(_ context: ManagedObjectContext) throws -> [String] {
        try context.performAndWait { () throws(AmbarError) in try context.fetch(FetchRequest<Employee>()).map(\.name).sorted() }
    }

    func testMessagesAreWrittenWithThePositionMoveAndKeyedByItsToken() throws {
        let context = privateContext("consumer")
        try context.performAndWait { () throws(AmbarError) in
            try insert("effect", in: context)
            try context.recordOutboxMessage(topic: "mail", payload: Data("to: a@example.com".utf8))
            try context.recordOutboxMessage(topic: "webhook", payload: Data([0, 1, 2, 255]))
            try context.save(movingConsumer: "mailer", from: nil, to: 7)
        }
        var messages = try coordinator.outboxMessages(consumer: "mailer")
        XCTAssertEqual(messages.map(\.key), ["mailer/7/0", "mailer/7/1"])
        XCTAssertEqual(messages.map(\.topic), ["mail", "webhook"])
        XCTAssertEqual(messages.map(\.payload), [Data("to: a@example.com".utf8), Data([0, 1, 2, 255])])
        XCTAssertEqual(messages.map(\.token), [7, 7])
        XCTAssertEqual(messages.map(\.attempts), [0, 0])
        XCTAssertTrue(messages[0].id < messages[1].id, "in the order recorded")
        XCTAssertEqual(try coordinator.outboxMessages(consumer: "someone-else"), [])

        // A move without other changes writes its messages too, with a key of the caller's.
        try context.performAndWait { () throws(AmbarError) in
            try context.recordOutboxMessage(topic: "mail", payload: Data("second".utf8), key: "order-42-confirmation")
            try context.save(movingConsumer: "mailer", from: 7, to: 9)
        }
        messages = try coordinator.outboxMessages(consumer: "mailer")
        XCTAssertEqual(messages.map(\.key), ["mailer/7/0", "mailer/7/1", "order-42-confirmation"])
        XCTAssertEqual(messages.last?.token, 9)

        // Deferred: one more attempt, its error, not before the time given; removed: gone.
        let later = Date().addingTimeInterval(30)
        try coordinator.deferOutboxMessage(messages[0], error: "connection refused", until: later)
        let deferred = try XCTUnwrap(try coordinator.outboxMessages(consumer: "mailer").first)
        XCTAssertEqual(deferred.attempts, 1)
        XCTAssertEqual(deferred.lastError, "connection refused")
        XCTAssertEqual(deferred.notBefore.timeIntervalSince1970, later.timeIntervalSince1970, accuracy: 0.01)
        XCTAssertTrue(try coordinator.removeOutboxMessage(messages[0]))
        XCTAssertFalse(try coordinator.removeOutboxMessage(messages[0]), "already removed")
        XCTAssertEqual(try coordinator.outboxMessages(consumer: "mailer").map(\.key), ["mailer/7/1", "order-42-confirmation"])
        XCTAssertEqual(try coordinator.outboxMessages(consumer: "mailer", limit: 1).map(\.key), ["mailer/7/1"])
    }

    /// The count is exact whatever the backlog, and per consumer: `sync-agent consumers` used to
    /// read up to 1,001 messages to count them and said "1000+" beyond.
    func testTheOutboxIsCountedExactlyPerConsumer() throws {
        XCTAssertEqual(try coordinator.outboxCount(consumer: "mailer"), 0)
        let context = privateContext("consumer")
        try context.performAndWait { () throws(AmbarError) in
            for i in 0..<1_500 { try context.recordOutboxMessage(topic: "mail", payload: Data("\(i)".utf8)) }
            try context.save(movingConsumer: "mailer", from: nil, to: 3)
            try context.recordOutboxMessage(topic: "hook", payload: Data())
            try context.save(movingConsumer: "hooks", from: nil, to: 3)
        }
        XCTAssertEqual(try coordinator.outboxCount(consumer: "mailer"), 1_500)
        XCTAssertEqual(try coordinator.outboxCount(consumer: "hooks"), 1)
        XCTAssertEqual(try coordinator.outboxCount(consumer: "nobody"), 0)
        for message in try coordinator.outboxMessages(consumer: "mailer", limit: 2) { try coordinator.removeOutboxMessage(message) }
        XCTAssertEqual(try coordinator.outboxCount(consumer: "mailer"), 1_498)
    }

    func testARefusedMoveWritesNoMessageAndAPlainSaveIsRefused() throws {
        let context = privateContext("consumer")
        try context.performAndWait { () throws(AmbarError) in
            try context.save(movingConsumer: "mailer", from: nil, to: 1)
            try insert("effect", in: context)
            try context.recordOutboxMessage(topic: "mail", payload: Data("x".utf8))
            // Not from where the position is: refused, nothing written, the messages kept.
            XCTAssertThrowsError(try context.save(movingConsumer: "mailer", from: 0, to: 2)) { error in
                XCTAssertEqual(error as? AmbarError, .consumerPositionMoved(consumer: "mailer", expected: 0, found: 1))
            }
            // A plain save would drop them: refused.
            XCTAssertThrowsError(try context.save()) { error in
                guard case .saveRefused(_, let reason) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertTrue(reason.contains("outbox"), reason)
            }
        }
        XCTAssertEqual(try coordinator.outboxMessages(consumer: "mailer"), [])
        XCTAssertEqual(try names(privateContext("reader")), [])
        // Rolled back, the messages go with the changes.
        try context.performAndWait { () throws(AmbarError) in
            try context.rollback()
            try context.save(movingConsumer: "mailer", from: 1, to: 2)
        }
        XCTAssertEqual(try coordinator.outboxMessages(consumer: "mailer"), [])
    }

    func testAKeyAlreadyWaitingFailsTheWholeSave() throws {
        let context = privateContext("consumer")
        try context.performAndWait { () throws(AmbarError) in
            try context.recordOutboxMessage(topic: "mail", payload: Data("first".utf8), key: "k")
            try context.save(movingConsumer: "mailer", from: nil, to: 1)
            try insert("effect", in: context)
            try context.recordOutboxMessage(topic: "mail", payload: Data("second".utf8), key: "k")
            XCTAssertThrowsError(try context.save(movingConsumer: "mailer", from: 1, to: 2)) { error in
                XCTAssertEqual(error as? AmbarError, .outboxKeyTaken(key: "k"))
            }
            XCTAssertThrowsError(try context.recordOutboxMessage(topic: "", payload: Data())) { error in
                guard case .invalidArgument = error as? AmbarError else { return XCTFail("\(error)") }
            }
        }
        XCTAssertEqual(try coordinator.outboxMessages(consumer: "mailer").map(\.payload), [Data("first".utf8)])
        XCTAssertEqual(try coordinator.historyCursor(consumer: "mailer")?.token, 1, "the position did not move")
        XCTAssertEqual(try names(privateContext("reader")), [], "nor were the changes saved")
    }
}
