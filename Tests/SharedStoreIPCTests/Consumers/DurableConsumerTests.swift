import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A durable consumer in a process of its own, SIGKILLed at random points while writers in other
/// processes commit: its effects (one `Alert` per item whose value is a multiple of 3) end up in
/// the store exactly once, on SQLite and on PostgreSQL.
final class DurableConsumerTests: XCTestCase {
    static let runsOnPostgreSQL = true
    var directory: TemporaryDirectory!
    var store: String!

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)
        directory = try TemporaryDirectory()
        store = try TestBackend.makeSharedStore(model: try alertModel(), file: directory.store)
    }

    override func tearDown() { directory = nil }

    private func coordinator() throws -> PersistentStoreCoordinator {
        let description: StoreDescription =
            store.hasPrefix("postgres") ? .postgres(URL(string: store)!) : .sqlite(URL(fileURLWithPath: store))
        return try PersistentStoreCoordinator(model: try alertModel(), store: description)
    }

    /// Starts the consumer process (delivering its outbox to `receiver`, if given) and waits
    /// until it runs.
    private func startConsumer(_ name: String, batch: Int, log: String, receiver: URL? = nil) throws -> SpawnedProcess {
        let logFile = directory.url.appendingPathComponent("\(log).log")
        let process = try SpawnedProcess(
            BuiltProducts.url("ambar-test-helper").path, ["consume", directory.url.path, store, name, String(batch)] + (receiver.map { [$0.path] } ?? []),
            log: logFile)
        let text = { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }
        try awaitCondition(timeout: 30, "consumer \(log) is ready") { text().contains("ready") || !process.isRunning }
        XCTAssertTrue(process.isRunning, "consumer \(log) died at start: \(text())")
        return process
    }

    private func awaitCondition(timeout: TimeInterval, _ what: String, _ condition: () throws -> Bool) throws {
        guard try eventually(timeout: timeout, condition) else { throw ConditionNotMet(what: what) }
    }

    struct ConditionNotMet: Error, CustomStringConvertible {
        let what: String
        var description: String { "timed out waiting until \(what)" }
    }

    /// With `receiver`, the consumer also records an outbox message per alert and delivers it
    /// there: each alert's message must reach it, under one key, whatever the kills.
    private func check(_ consumerName: String, writers: [String: Int], restarts: Int, batch: Int, receiver: URL? = nil) throws {
        let peers = try writers.keys.sorted().map { try Peer($0, directory: directory, storeArgument: store) }
        defer { peers.forEach { $0.kill() } }
        for (peer, prefix) in zip(peers, writers.keys.sorted()) { try peer.post("burst \(writers[prefix]!) \(prefix)-") }

        var generator = SystemRandomNumberGenerator()
        var consumer = try startConsumer(consumerName, batch: batch, log: "consumer-0", receiver: receiver)
        for restart in 1...restarts {
            usleep(UInt32.random(in: 20_000...300_000, using: &generator))
            XCTAssertTrue(consumer.isRunning, "consumer-\(restart - 1) ran until killed")
            kill(consumer.processIdentifier, SIGKILL)
            XCTAssertNotNil(consumer.waitForExit(timeout: 10))
            if restart % 3 == 0 { usleep(100_000) }  // transactions commit while it is down
            consumer = try startConsumer(consumerName, batch: batch, log: "consumer-\(restart)", receiver: receiver)
        }
        for peer in peers { XCTAssertTrue(try peer.receive(timeout: 120).hasPrefix("ok "), "\(peer.name) wrote every item") }

        // The writers are done: the consumer catches up to their last transaction.
        let coordinator = try coordinator()
        let lastItemToken = try coordinator.history(after: 0).filter { !$0.inserted.filter { $0.entityName == "Item" }.isEmpty }.map(\.token).max() ?? 0
        try awaitCondition(timeout: 60, "the consumer's position passes token \(lastItemToken)") {
            try coordinator.historyCursor(consumer: consumerName).map { $0.token >= lastItemToken } ?? false
        }
        if receiver != nil {
            try awaitCondition(timeout: 60, "the outbox is empty") { try coordinator.outboxMessages(consumer: consumerName).isEmpty }
        }
        XCTAssertTrue(consumer.isRunning, "the last consumer ran until killed")
        kill(consumer.processIdentifier, SIGKILL)
        _ = consumer.waitForExit(timeout: 10)

        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "check")
        let (items, alerts) = try context.performAndWait { () throws(AmbarError) -> ([String: Int64], [String]) in
            var items: [String: Int64] = [:]
            for item in try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                if case .string(let uid) = try item.value(forKey: "uid"), case .integer(let value) = try item.value(forKey: "value") { items[uid] = value }
            }
            var alerts: [String] = []
            for alert in try context.fetch(FetchRequest<ManagedObject>(entityName: "Alert")) {
                if case .string(let uid) = try alert.value(forKey: "item") { alerts.append(uid) }
            }
            return (items, alerts)
        }
        XCTAssertEqual(items.count, writers.values.reduce(0, +), "every item was written")
        let expected = Set(items.filter { $0.value % 3 == 0 }.keys)
        XCTAssertEqual(Set(alerts), expected, "one alert for each item whose value is a multiple of 3, none for the others")
        let repeated = Dictionary(grouping: alerts, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        XCTAssertEqual(repeated, [], "no alert was made twice")
        XCTAssertEqual(alerts.count, expected.count)
        guard let receiver else { return }
        // The receiver: every alert's message, each key naming one alert; a key may come twice
        // (a kill between the delivery and its removal), which a receiver keeping keys ignores.
        let lines = try String(contentsOf: receiver, encoding: .utf8).split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        XCTAssertTrue(lines.allSatisfy { $0.count == 2 }, "\(lines.filter { $0.count != 2 })")
        let byKey = Dictionary(grouping: lines.filter { $0.count == 2 }, by: { $0[0] }).mapValues { Set($0.map { $0[1] }) }
        XCTAssertTrue(byKey.values.allSatisfy { $0.count == 1 }, "a key names one effect: \(byKey.filter { $0.value.count > 1 })")
        XCTAssertEqual(Set(byKey.values.compactMap(\.first)), expected, "every alert's message reached the receiver")
        XCTAssertEqual(byKey.count, expected.count, "one key per alert")
        XCTAssertLessThanOrEqual(lines.count - byKey.count, restarts, "a message is sent again only after a kill: \(lines.count - byKey.count) repeats")
    }

    func testAConsumerKilledTwentyTimesMakesEachAlertExactlyOnce() throws {
        try check("alerter", writers: ["w1": TestScale.count(1_500), "w2": TestScale.count(1_500)], restarts: 20, batch: 1)
    }

    func testBatchesOfSeveralTransactionsAreExactlyOnceToo() throws {
        try check("batched-alerter", writers: ["w1": TestScale.count(1_000), "w2": TestScale.count(1_000)], restarts: 8, batch: 16)
    }

    func testOutboxMessagesReachTheReceiverOnceByKeyAcrossKills() throws {
        let receiver = directory.url.appendingPathComponent("receiver.tsv")
        try check("mailer", writers: ["w1": TestScale.count(600), "w2": TestScale.count(600)], restarts: 10, batch: 4, receiver: receiver)
    }
}
