import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

@testable import SharedStoreIPC

/// Two copies of one durable consumer: one delivers, the other stands by and takes over when the
/// first stops (at once) or can no longer renew its lease (once it lapses); a copy that lost the
/// lease in the middle of a batch saves nothing of it and ends with `consumerLeaseLost`.
final class ConsumerCopiesTests: SharedStoreTestCase {
    private var stack: DataStack!
    private var sync: SharedStoreSync!

    private func share() async throws {
        stack = try DataStack.open(model: .model(try alertModel()), storeURL: directory.url.appendingPathComponent("alerts.sqlite"), name: "copies")
        sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
    }

    override func tearDown() async throws {
        await sync?.stop()
        sync = nil
        stack = nil
        try await super.tearDown()
    }

    private func options(lease: Duration) -> ChangeConsumer.Options {
        var options = ChangeConsumer.Options()
        options.includesOwnTransactions = true
        options.startingPoint = .oldestRetained
        options.lease = lease
        return options
    }

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

    /// Waits until `condition` holds (checking every 20 ms); throws when it does not within 20 s.
    private func until(_ what: String, _ condition: () throws -> Bool) async throws {
        for _ in 0..<1_000 {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ConditionNotMet(what: what)
    }

    struct ConditionNotMet: Error, CustomStringConvertible {
        let what: String
        var description: String { "timed out waiting until \(what)" }
    }

    /// Runs `consumer`, recording the token of each transaction it handles.
    private func run(_ consumer: ChangeConsumer, into delivered: Locked<[Int64]>) -> Task<Void, any Error> {
        Task { try await consumer.process { transaction, _ in delivered.withLock { $0.append(transaction.token) } } }
    }

    func testOneCopyDeliversTheOtherStandsByAndTakesOverAtOnceWhenItStops() async throws {
        try await share()
        let first = try ChangeConsumer(name: "ha", sharing: sync, options: options(lease: .seconds(60)))
        let second = try ChangeConsumer(name: "ha", sharing: sync, options: options(lease: .seconds(60)))
        defer {
            first.stop()
            second.stop()
        }
        XCTAssertNotEqual(first.owner, second.owner, "two copies in one process are two owners")
        let (byFirst, bySecond) = (Locked<[Int64]>([]), Locked<[Int64]>([]))
        let firstRun = run(first, into: byFirst)
        try await until("the first copy is active") { first.activeOwner == first.owner }
        let secondRun = run(second, into: bySecond)
        try await until("the second copy stands by") { second.isStandingBy }
        XCTAssertEqual(second.activeOwner, first.owner, "the standby knows who is active")
        let coordinator = try stack.writerCoordinator
        XCTAssertEqual(try coordinator.consumerStandbys().map(\.owner), [second.owner], "the store records the copy standing by")

        let before = try await saveItems(["a", "b", "c"])
        try await until("the first copy handled them") { byFirst.withLock { $0 } == before }
        XCTAssertEqual(bySecond.withLock { $0 }, [], "the standby handled nothing")

        first.stop()
        try await firstRun.value
        // The lease is a minute: only the release can hand it over this soon.
        try await until("the second copy took over") { second.activeOwner == second.owner && !second.isStandingBy }
        let after = try await saveItems(["d", "e"])
        try await until("the second copy handled the rest") { bySecond.withLock { $0 } == after }
        XCTAssertEqual(byFirst.withLock { $0 }, before, "the stopped copy handled nothing more")
        let ownership = try XCTUnwrap(try stack.writerCoordinator.consumerOwnerships().first { $0.consumer == "ha" })
        XCTAssertEqual(ownership.owner, second.owner)
        XCTAssertEqual(ownership.epoch, 2)
        XCTAssertEqual(try coordinator.consumerStandbys(), [], "the copy that took over stands by no more")

        // A copy that stops while standing by leaves no record behind.
        let third = try ChangeConsumer(name: "ha", sharing: sync, options: options(lease: .seconds(60)))
        let thirdRun = run(third, into: Locked<[Int64]>([]))
        try await until("the third copy stands by") { third.isStandingBy }
        XCTAssertEqual(try coordinator.consumerStandbys().map(\.owner), [third.owner])
        third.stop()
        try await thirdRun.value
        XCTAssertEqual(try coordinator.consumerStandbys(), [], "its record went with it")
        second.stop()
        try await secondRun.value
    }

    func testOnlyTheActiveCopySendsTheOutboxInOrderRetryingAFailedSend() async throws {
        try await share()
        let first = try ChangeConsumer(name: "mailer", sharing: sync, options: options(lease: .seconds(60)))
        let second = try ChangeConsumer(name: "mailer", sharing: sync, options: options(lease: .seconds(60)))
        defer {
            first.stop()
            second.stop()
        }
        // A message per transaction that inserted an item: its uid.
        let record: @Sendable (HistoryTransaction, ManagedObjectContext) throws -> Void = { transaction, context in
            for id in transaction.inserted where id.entityName == "Item" {
                guard case .string(let uid) = try context.existingObject(with: id).value(forKey: "uid") else { continue }
                try context.recordOutboxMessage(topic: "mail", payload: Data(uid.utf8))
            }
        }
        // The receiver: what each copy sent; the first two attempts fail.
        let sent = Locked<[(sender: ConsumerOwner, uid: String)]>([])
        let attempts = Locked(0)
        func deliver(_ consumer: ChangeConsumer) -> Task<Void, any Error> {
            Task {
                try await consumer.deliverOutbox(retryDelay: .milliseconds(50)) { message in
                    if attempts.withLock({ count in
                        count += 1
                        return count <= 2
                    }) {
                        struct Refused: Error {}
                        throw Refused()
                    }
                    sent.withLock { $0.append((consumer.owner, String(decoding: message.payload, as: UTF8.self))) }
                }
            }
        }
        let firstRun = Task { try await first.process(record) }
        let firstDelivery = deliver(first)
        try await until("the first copy is active") { first.activeOwner == first.owner }
        let secondRun = Task { try await second.process(record) }
        let secondDelivery = deliver(second)
        try await until("the second copy stands by") { second.isStandingBy }

        try await saveItems(["a", "b", "c"])
        try await until("the first copy sent a, b and c") { sent.withLock { $0.map(\.uid) } == ["a", "b", "c"] }
        XCTAssertEqual(Set(sent.withLock { $0.map(\.sender) }), [first.owner], "the standby sent nothing")
        XCTAssertEqual(attempts.withLock { $0 }, 5, "a was refused twice, then sent, in order")
        first.stop()
        try await firstRun.value
        try await firstDelivery.value
        try await until("the second copy took over") { second.activeOwner == second.owner }
        try await saveItems(["d", "e"])
        try await until("the second copy sent d and e") { sent.withLock { $0.map(\.uid) } == ["a", "b", "c", "d", "e"] }
        XCTAssertEqual(sent.withLock { $0.suffix(2).map(\.sender) }, [second.owner, second.owner])
        // A message is removed once its send has returned, just after the receiver recorded it.
        try await until("every sent message was removed") { try stack.writerCoordinator.outboxMessages(consumer: "mailer").isEmpty }
        second.stop()
        try await secondRun.value
        try await secondDelivery.value
    }

    /// A full page of messages whose first is refused: delivery waits for the retry, reading the
    /// outbox once per check, instead of reading the same page again and again until it is due.
    func testARefusedMessageAtTheHeadOfAFullPageIsWaitedForNotPolled() async throws {
        try await share()
        var settings = options(lease: .seconds(60))
        settings.checkInterval = .milliseconds(100)
        let consumer = try ChangeConsumer(name: "mailer", sharing: sync, options: settings)
        defer { consumer.stop() }
        let run = Task {
            try await consumer.process { transaction, context in
                for _ in transaction.inserted { try context.recordOutboxMessage(topic: "mail", payload: Data("m".utf8)) }
            }
        }
        let attempts = Locked(0)
        let delivery = Task {
            // Every send is refused; the retry comes a second later, ten checks.
            try await consumer.deliverOutbox(retryDelay: .seconds(1), maximumRetryDelay: .seconds(1)) { _ in
                attempts.withLock { $0 += 1 }
                struct Refused: Error {}
                throw Refused()
            }
        }
        let pageAndOne = ChangeConsumer.outboxPage + 1
        let context = try stack.importerContext()
        try await context.perform { () throws(AmbarError) in
            for n in 0..<pageAndOne {
                let item = try context.insertObject(entityName: "Item")
                try item.setValue(.string("u\(n)"), forKey: "uid")
            }
            try context.save()
        }
        try await until("the first message was refused") { attempts.withLock { $0 } == 1 }
        let readsAtFirstRefusal = consumer.outboxReadCount
        try await until("the first message was tried again") { attempts.withLock { $0 } == 2 }
        let reads = consumer.outboxReadCount - readsAtFirstRefusal
        XCTAssertEqual(try stack.writerCoordinator.outboxMessages(consumer: "mailer", limit: 1_000).count, pageAndOne, "nothing was sent")
        // About one read per check (ten in the second); a loop re-reading the page reads thousands.
        XCTAssertLessThan(reads, 50, "the outbox was read \(reads) times while its first message waited for its retry")
        XCTAssertGreaterThanOrEqual(reads, 1, "the retry read the outbox")
        consumer.stop()
        try await run.value
        try await delivery.value
    }

    func testACopyThatLostItsLeaseMidBatchSavesNothingAndEndsWithTheError() async throws {
        try await share()
        let lease = Duration.milliseconds(600)
        // The first copy on a stack and sharing of its own, as another process would be.
        let otherStack = try DataStack.open(model: .model(try alertModel()), storeURL: directory.url.appendingPathComponent("alerts.sqlite"), name: "first")
        let otherSync = try await SharedStoreSync.start(stack: otherStack, configuration: .sharedDirectory(directory.url))
        let first = try ChangeConsumer(name: "alerter", sharing: otherSync, options: options(lease: lease))
        let second = try ChangeConsumer(name: "alerter", sharing: sync, options: options(lease: lease))
        defer {
            first.stop()
            second.stop()
        }
        let inHandler = Locked(false)
        let resume = DispatchSemaphore(value: 0)
        // An alert per transaction that inserted an item (not per alert: the copies' own saves are
        // transactions they are delivered too).
        let alert: @Sendable (HistoryTransaction, ManagedObjectContext) throws -> Void = { transaction, context in
            guard transaction.inserted.contains(where: { $0.entityName == "Item" }) else { return }
            let made = try context.insertObject(entityName: "Alert")
            try made.setValue(.string("for \(transaction.token)"), forKey: "item")
        }
        // The first copy hangs in its handler (as a process paused by SIGSTOP would) past its lease.
        let firstRun = Task {
            try await first.process { transaction, context in
                guard transaction.inserted.contains(where: { $0.entityName == "Item" }) else { return }
                inHandler.withLock { $0 = true }
                resume.wait()  // on the handler's context queue, not a task's thread
                try alert(transaction, context)
            }
        }
        try await until("the first copy is active") { first.activeOwner == first.owner }
        let secondRun = Task { try await second.process(alert) }
        try await until("the second copy stands by") { second.isStandingBy }
        let tokens = try await saveItems(["x"])
        try await until("the first copy took the transaction") { inHandler.withLock { $0 } }
        try await until("the second copy took over the lapsed lease") { second.activeOwner == second.owner && !second.isStandingBy }
        try await until("the second copy saved its alert") { try self.alerts() == ["for \(tokens[0])"] }
        resume.signal()
        do {
            try await firstRun.value
            XCTFail("the copy that lost its lease went on")
        } catch AmbarError.consumerLeaseLost(let consumer, let holder) {
            XCTAssertEqual(consumer, "alerter")
            XCTAssertEqual(holder, "\(second.owner)")
        }
        XCTAssertEqual(try alerts(), ["for \(tokens[0])"], "the batch's effect is in the store once")
        XCTAssertGreaterThanOrEqual(
            try XCTUnwrap(try stack.writerCoordinator.historyCursor(consumer: "alerter")?.token), tokens[0], "the new owner moved past it")
        second.stop()
        try await secondRun.value
        await otherSync.stop()
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
}
