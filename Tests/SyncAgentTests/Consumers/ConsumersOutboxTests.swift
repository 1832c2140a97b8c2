import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `sync-agent consumers` shows what waits in each durable consumer's outbox: how many messages,
/// and the next one's key, attempts and last error.
final class ConsumersOutboxTests: AgentTestCase {
    func testConsumersShowsTheOutboxWaiting() throws {
        try initStore()
        let coordinator = try PersistentStoreCoordinator(model: try PersistentStoreCoordinator.storedModel(at: store), store: .sqlite(store))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "mailer")
        try context.performAndWait { () throws(AmbarError) in
            try context.recordOutboxMessage(topic: "mail", payload: Data("one".utf8))
            try context.recordOutboxMessage(topic: "mail", payload: Data("two".utf8))
            try context.save(movingConsumer: "mailer", from: nil, to: 0)
        }
        let next = try XCTUnwrap(try coordinator.outboxMessages(consumer: "mailer").first)
        try coordinator.deferOutboxMessage(next, error: "connection refused", until: Date().addingTimeInterval(60))

        let listed = try agent(["consumers", "--directory", directory.url.path, "--json"])
        XCTAssertEqual(listed.status, 0, listed.error)
        let mailer = try XCTUnwrap(try listed.output.split(separator: "\n").map(json).first { $0["consumer"] as? String == "mailer" })
        let outbox = try XCTUnwrap(mailer["outbox"] as? [String: Any], "\(mailer)")
        XCTAssertEqual(outbox["pending"] as? Int, 2)
        XCTAssertEqual(outbox["next_key"] as? String, "mailer/0/0")
        XCTAssertEqual(outbox["next_attempts"] as? Int, 1)
        XCTAssertEqual(outbox["next_last_error"] as? String, "connection refused")

        let text = try agent(["consumers", "--directory", directory.url.path])
        XCTAssertTrue(text.output.contains("outbox 2 waiting (next failed 1 time(s): connection refused)"), text.output)

        // Sent and removed: nothing waits.
        for message in try coordinator.outboxMessages(consumer: "mailer") { try coordinator.removeOutboxMessage(message) }
        let after = try agent(["consumers", "--directory", directory.url.path, "--json"])
        let emptied = try XCTUnwrap(try after.output.split(separator: "\n").map(json).first { $0["consumer"] as? String == "mailer" })
        XCTAssertEqual((emptied["outbox"] as? [String: Any])?["pending"] as? Int, 0)
        XCTAssertNil((emptied["outbox"] as? [String: Any])?["next_key"])
    }

    /// A backlog beyond what one read returns is counted exactly, in the JSON and in the text.
    func testConsumersCountsALargeOutboxExactly() throws {
        try initStore()
        let coordinator = try PersistentStoreCoordinator(model: try PersistentStoreCoordinator.storedModel(at: store), store: .sqlite(store))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "mailer")
        try context.performAndWait { () throws(AmbarError) in
            for i in 0..<1_234 { try context.recordOutboxMessage(topic: "mail", payload: Data("\(i)".utf8)) }
            try context.save(movingConsumer: "mailer", from: nil, to: 0)
        }
        let listed = try agent(["consumers", "--directory", directory.url.path, "--json"])
        XCTAssertEqual(listed.status, 0, listed.error)
        let mailer = try XCTUnwrap(try listed.output.split(separator: "\n").map(json).first { $0["consumer"] as? String == "mailer" })
        XCTAssertEqual((mailer["outbox"] as? [String: Any])?["pending"] as? Int, 1_234)
        XCTAssertEqual((mailer["outbox"] as? [String: Any])?["next_key"] as? String, "mailer/0/0")
        let text = try agent(["consumers", "--directory", directory.url.path])
        XCTAssertTrue(text.output.contains("outbox 1234 waiting"), text.output)
    }
}
