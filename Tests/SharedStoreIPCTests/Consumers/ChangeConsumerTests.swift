import AmbarStack
import AmbarTestSupport
import Foundation
import ServiceLifecycleTestKit
import SharedStoreIPC
import XCTest

/// A durable consumer in this process: history purged past its position is a reconcile step (or
/// an error), never silence; `events()` delivers again what a loop left unacknowledged; its own
/// transactions only by option; one loop per consumer; its handler's context cannot save alone.
final class ChangeConsumerTests: SharedStoreTestCase {
    private var stack: DataStack!
    private var sync: SharedStoreSync!

    /// Opens this process's stack on a store of `alertModel()` and shares it (each test first:
    /// XCTest runs an async setUp before the directory is made).
    private func share() async throws {
        stack = try DataStack.open(model: .model(try alertModel()), storeURL: directory.url.appendingPathComponent("alerts.sqlite"), name: "consumer")
        sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
    }

    override func tearDown() async throws {
        await sync?.stop()
        sync = nil
        stack = nil
        try await super.tearDown()
    }

    /// Saves items `uids` (one transaction each) from a context of this process; returns the tokens.
    @discardableResult
    private func saveItems(_ uids: [String]) async throws -> [Int64] {
        let context = try stack.importerContext()
        var tokens: [Int64] = []
        for uid in uids {
            try await context.perform { () throws(AmbarError) in
                let item = try context.insertObject(entityName: "Item")
                try item.setValue(.string(uid), forKey: "uid")
                try context.save()
            }
            tokens.append(try stack.writerCoordinator.currentHistoryToken())
        }
        return tokens
    }

    private func alerts() throws -> [String] {
        let context = try stack.importerContext()
        return try context.performAndWait { () throws(AmbarError) -> [String] in
            var items: [String] = []
            for alert in try context.fetch(FetchRequest<ManagedObject>(entityName: "Alert")) {
                if case .string(let item) = try alert.value(forKey: "item") { items.append(item) }
            }
            return items.sorted()
        }
    }

    /// Waits until `condition` holds (checking every 20 ms); throws when it does not within 20 s.
    private func until(_ what: String, _ condition: () throws -> Bool) async throws {
        for _ in 0..<1_000 {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTFail("timed out waiting until \(what)")
        throw CancellationError()
    }

    /// A consumer's service, at its group's graceful shutdown (triggered with swift-service-
    /// lifecycle's test kit, no signal), finishes the batch in hand, records its position, and
    /// returns; what was saved after it is left for its next run.
    func testAConsumerServiceStopsAtGracefulShutdownWithItsPositionRecorded() async throws {
        try await share()
        var options = ChangeConsumer.Options()
        options.includesOwnTransactions = true  // the items are this process's
        let coordinator = try stack.writerCoordinator
        let consumer = try ChangeConsumer(name: "graceful", sharing: sync, options: options)
        let handled = Locked<[Int64]>([])
        var first: [Int64] = []
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await consumer.service { transaction, _ in handled.withLock { $0.append(transaction.token) } }.run() }
                // It starts at the head: what is saved once its position is recorded is delivered.
                try await until("the consumer started") { try coordinator.historyCursor(consumer: "graceful") != nil }
                first = try await saveItems(["a", "b"])
                try await until("both items were handled") { handled.withLock { $0 } == first }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()  // run() returned
            }
        }
        XCTAssertEqual(try coordinator.historyCursor(consumer: "graceful")?.token, first.last, "its position is recorded")
        try await saveItems(["c"])
        XCTAssertEqual(handled.withLock { $0 }, first, "nothing is handled after it stopped")
    }

    /// A consumer's service and its outbox's, in one group: the handler's messages are sent while
    /// the group runs, and both return at its graceful shutdown.
    func testAnOutboxServiceSendsUntilGracefulShutdown() async throws {
        try await share()
        var options = ChangeConsumer.Options()
        options.includesOwnTransactions = true  // the items are this process's
        let consumer = try ChangeConsumer(name: "mailer", sharing: sync, options: options)
        let sent = Locked<[String]>([])
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await consumer.service { transaction, context in
                        for id in transaction.inserted {
                            guard case .string(let uid) = try context.existingObject(with: id).value(forKey: "uid") else { continue }
                            try context.recordOutboxMessage(topic: "mail", payload: Data(uid.utf8))
                        }
                    }.run()
                }
                group.addTask {
                    try await consumer.outboxService { message in sent.withLock { $0.append(String(decoding: message.payload, as: UTF8.self)) } }.run()
                }
                try await until("the consumer started") { try self.stack.writerCoordinator.historyCursor(consumer: "mailer") != nil }
                try await saveItems(["a", "b"])
                try await until("both messages were sent") { sent.withLock { $0 } == ["a", "b"] }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()  // both run() returned
            }
        }
        XCTAssertEqual(try stack.writerCoordinator.outboxMessages(consumer: "mailer"), [], "sent messages are removed")
    }

    func testPurgedHistoryIsReconciledFromTheDataThenDeliveryContinuesAfterTheHead() async throws {
        try await share()
        var options = ChangeConsumer.Options()
        options.includesOwnTransactions = true  // the items are this process's
        let coordinator = try stack.writerCoordinator
        try coordinator.moveConsumer("alerter", from: nil, to: 0)
        try await saveItems(["a", "b", "c"])
        // The consumer was away past its lease: a purge an hour after the one that saw these
        // transactions removes what it had not handled.
        let retention = HistoryRetention(history: 1, consumerLease: 1)
        try coordinator.purgeHistory(retention)
        let purge = try coordinator.purgeHistory(retention, now: Date().addingTimeInterval(3_600))
        XCTAssertEqual(purge.purgedThrough, 3)
        let head = try coordinator.currentHistoryToken()

        let consumer = try ChangeConsumer(name: "alerter", sharing: sync, options: options)
        defer { consumer.stop() }  // also when an assertion throws
        let expiries = Locked<[HistoryExpiry]>([])
        let run = Task {
            try await consumer.process(
                reconcile: { expiry, context in
                    expiries.withLock { $0.append(expiry) }
                    let alert = try context.insertObject(entityName: "Alert")
                    try alert.setValue(.string("reconciled"), forKey: "item")
                }
            ) { transaction, context in
                for id in transaction.inserted where id.entityName == "Item" {
                    let alert = try context.insertObject(entityName: "Alert")
                    try alert.setValue(try context.existingObject(with: id).value(forKey: "uid"), forKey: "item")
                }
            }
        }
        // Its own save (the reconcile step's alert) is a transaction after the head, delivered too.
        try await until("the reconcile step ran") { (try coordinator.historyCursor(consumer: "alerter")?.token ?? 0) >= head }
        XCTAssertEqual(expiries.withLock { $0 }, [HistoryExpiry(consumer: "alerter", position: 0, purgedThrough: 3, head: head)])
        XCTAssertEqual(try alerts(), ["reconciled"], "the reconcile step's changes were saved with the position moved to the head")

        let later = try await saveItems(["d"])
        try await until("the consumer passed the new item") { try coordinator.historyCursor(consumer: "alerter")!.token >= later[0] }
        XCTAssertEqual(try alerts(), ["d", "reconciled"], "delivery went on after the head")
        consumer.stop()
        try await run.value
    }

    func testWithoutAReconcileStepPurgedHistoryEndsProcessWithTheError() async throws {
        try await share()
        let coordinator = try stack.writerCoordinator
        try coordinator.moveConsumer("strict", from: nil, to: 0)
        try await saveItems(["a", "b"])
        let retention = HistoryRetention(history: 1, consumerLease: 1)
        try coordinator.purgeHistory(retention)
        try coordinator.purgeHistory(retention, now: Date().addingTimeInterval(3_600))
        let consumer = try ChangeConsumer(name: "strict", sharing: sync)
        do {
            try await consumer.process { _, _ in XCTFail("nothing can be delivered") }
            XCTFail("process returned")
        } catch AmbarError.historyExpired(let after, let purgedThrough) {
            XCTAssertEqual(after, 0)
            XCTAssertEqual(purgedThrough, 2)
        }
        XCTAssertEqual(try coordinator.historyCursor(consumer: "strict")?.token, 0, "the position did not move")
    }

    func testEventsDeliverAgainWhatALoopLeftUnacknowledged() async throws {
        try await share()
        var options = ChangeConsumer.Options()
        options.includesOwnTransactions = true
        options.startingPoint = .oldestRetained
        options.maximumBatchSize = 2
        let tokens = try await saveItems(["a", "b", "c"])
        let consumer = try ChangeConsumer(name: "mailer", sharing: sync, options: options)
        // The first loop takes one batch and breaks out without asking for the next event.
        var first: ChangeBatch?
        for try await event in consumer.events() {
            guard case .transactions(let batch) = event else { return XCTFail("\(event)") }
            first = batch
            break
        }
        XCTAssertEqual(first?.transactions.map(\.token), Array(tokens.prefix(2)))
        XCTAssertEqual(try stack.writerCoordinator.historyCursor(consumer: "mailer")?.token, 0, "not acknowledged: the position stays")
        // The next loop gets that batch again, then the rest; asking for the third event
        // acknowledges the second.
        var seen: [Int64] = []
        for try await event in consumer.events() {
            guard case .transactions(let batch) = event else { return XCTFail("\(event)") }
            seen += batch.transactions.map(\.token)
            if seen.count == 3 { break }
        }
        XCTAssertEqual(seen, tokens, "the unacknowledged batch came again, in order")
        XCTAssertEqual(try stack.writerCoordinator.historyCursor(consumer: "mailer")?.token, tokens[1])
    }

    func testOwnTransactionsOnlyByOptionAndOneLoopAtATime() async throws {
        try await share()
        let coordinator = try stack.writerCoordinator
        let consumer = try ChangeConsumer(name: "others-only", sharing: sync)
        defer { consumer.stop() }  // also when an assertion throws
        let delivered = Locked<[Int64]>([])
        let run = Task { try await consumer.process { transaction, _ in delivered.withLock { $0.append(transaction.token) } } }
        try await until("the consumer started") { try coordinator.historyCursor(consumer: "others-only") != nil }
        do {
            try await consumer.process { _, _ in }
            XCTFail("a second loop of the same consumer ran")
        } catch AmbarError.invalidArgument(let message) {
            XCTAssertTrue(message.contains("already running"), message)
        }
        let own = try await saveItems(["mine"])
        let writer = try Peer("writer", directory: directory, store: directory.url.appendingPathComponent("alerts.sqlite"))
        defer { writer.kill() }
        let theirs = try XCTUnwrap(Int64(try writer.send("insert theirs 1").dropFirst("ok ".count)))
        try await until("the consumer passed the other process's transaction") { try coordinator.historyCursor(consumer: "others-only")!.token >= theirs }
        XCTAssertEqual(delivered.withLock { $0 }, [theirs], "this process's transaction \(own[0]) was skipped")
        consumer.stop()
        try await run.value
    }

    func testTheHandlersContextCannotSaveOnItsOwn() async throws {
        try await share()
        var options = ChangeConsumer.Options()
        options.includesOwnTransactions = true
        options.startingPoint = .oldestRetained
        try await saveItems(["a"])
        let consumer = try ChangeConsumer(name: "saver", sharing: sync, options: options)
        do {
            try await consumer.process { _, context in
                let alert = try context.insertObject(entityName: "Alert")
                try alert.setValue(.string("early"), forKey: "item")
                try context.save()
            }
            XCTFail("the handler's save went through")
        } catch AmbarError.saveRefused(_, let reason) {
            XCTAssertTrue(reason.contains("saves it with its position"), reason)
        }
        XCTAssertEqual(try alerts(), [], "nothing of the batch was saved")
        XCTAssertEqual(try stack.writerCoordinator.historyCursor(consumer: "saver")?.token, 0)
    }

    /// A sharing process whose merge position takes a running consumer's name (it overwrites the
    /// position with a leased one) stops the consumer with an error naming that position: before,
    /// each save was refused with the position where the consumer expected it, and it retried for
    /// ever.
    func testAMergePositionTakingARunningConsumersNameStopsItWithTheConflict() async throws {
        try await share()
        let coordinator = try stack.writerCoordinator
        var options = ChangeConsumer.Options()
        options.includesOwnTransactions = true
        let consumer = try ChangeConsumer(name: "alerter", sharing: sync, options: options)
        defer { consumer.stop() }
        let delivered = Locked<[Int64]>([])
        let ended = Locked<Result<Void, any Error>?>(nil)
        let run = Task {
            do {
                try await consumer.process { transaction, _ in delivered.withLock { $0.append(transaction.token) } }
                ended.withLock { $0 = .success(()) }
            } catch {
                ended.withLock { $0 = .failure(error) }
            }
        }
        try await until("the consumer started") { try coordinator.historyCursor(consumer: "alerter") != nil }
        let head = try coordinator.currentHistoryToken()
        try coordinator.setHistoryCursor(consumer: "alerter", token: head, lease: 120)
        let tokens = try await saveItems(["a"])
        try await until("the consumer stopped") { ended.withLock { $0 } != nil }
        await run.value
        switch ended.withLock({ $0 }) {
        case .failure(let error as AmbarError):
            XCTAssertEqual(error, .consumerNameTaken(consumer: "alerter", lease: 120))
        case let other:
            XCTFail("the consumer ended with \(String(describing: other)), not the conflict")
        }
        XCTAssertEqual(delivered.withLock { $0 }, tokens, "the transaction was handled once, its position refused")
        XCTAssertEqual(try coordinator.historyCursor(consumer: "alerter")?.lease, 120, "the merge position is left as it was")
    }
}
