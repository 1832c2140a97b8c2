import AmbarPostgres
import AmbarSwiftData
import AmbarTestSupport
import Foundation
import SwiftDataSamples
import XCTest

/// Containers on a shared directory, across real processes: another process's saves reach the
/// main context (Observation sees them) and the history, and a durable consumer written with
/// SwiftData's types handles each transaction once, across a kill. On SQLite, and again on
/// PostgreSQL (a store on a server, shared through the same directory's hub).
final class SharedContainerTests: XCTestCase {
    static let runsOnPostgreSQL = true
    private var scratch: ScratchDirectory!
    /// How the peers name the store: nothing for the shared directory's file, else a server's URL.
    private var storeArguments: [String] = []
    private var configuration: ModelConfiguration!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
        switch TestBackend.current {
        case .sqlite:
            configuration = ModelConfiguration(sharedDirectory: scratch.url)
        case .postgres:
            let url = try PostgresTestServer.shared().url(database: "swiftdata_\(UUID().uuidString.prefix(8))")
            configuration = ModelConfiguration(store: .postgres(url), sharing: .sharedDirectory(scratch.url))
            storeArguments = [url.absoluteString]
        }
    }

    override func tearDown() {
        scratch = nil
    }

    private func sharedContainer() throws -> ModelContainer {
        try ModelContainer(for: Reading.self, Alert.self, configurations: configuration)
    }

    private func peer(_ name: String) throws -> Peer {
        try Peer(name, program: "swiftdata-peer", arguments: [scratch.url.path] + storeArguments, logDirectory: scratch.url)
    }

    /// Runs `body` with a shared container, and stops the sharing afterwards, pass or fail.
    @MainActor
    private func withSharedContainer(_ body: (ModelContainer) async throws -> Void) async throws {
        let container = try sharedContainer()
        do {
            try await body(container)
        } catch {
            await container.stopSharing()
            throw error
        }
        await container.stopSharing()
    }

    /// Waits until `condition` holds on the main actor, looking after each transaction of another
    /// process is merged into the main context; fails the test when it does not within `timeout`.
    @MainActor
    private func waitForMerges(of container: ModelContainer, timeout: TimeInterval = 20, until condition: @escaping @MainActor () throws -> Bool) async throws {
        if try condition() { return }
        let sharing = try XCTUnwrap(container.sharing)
        let met = expectation(description: "a merged transaction made the condition hold")
        let fulfilled = Locked(false)
        let observation = sharing.observeRemoteMerges { _ in
            MainActor.assumeIsolated {
                // try?: a read that fails is "not yet"; the final assertion reports it.
                guard !fulfilled.value, (try? condition()) == true else { return }
                fulfilled.set(true)
                met.fulfill()
            }
        }
        defer { observation.cancel() }
        await fulfillment(of: [met], timeout: timeout)
        XCTAssertTrue(try condition())
    }

    @MainActor
    func testAnotherProcessesSavesReachTheMainContextItsObserversAndTheHistory() async throws {
        try await withSharedContainer { container in
            let main = container.mainContext
            main.author = "test"
            let boiler = Reading(sensor: "boiler", value: 20)
            main.insert(boiler)
            try main.save()
            let peer = try peer("peer")

            // A change of another process: the model this process holds changes, and says so.
            let changed = expectation(description: "Observation saw the other process's value")
            withObservationTracking {
                _ = boiler.value
            } onChange: {
                changed.fulfill()
            }
            XCTAssertEqual(try peer.send("set boiler 55"), "ok")
            await fulfillment(of: [changed], timeout: 20)
            XCTAssertEqual(boiler.value, 55)

            // An insert of another process: fetched from the main context once merged.
            XCTAssertEqual(try peer.send("insert attic 12"), "ok")
            try await waitForMerges(of: container) { try main.fetchCount(FetchDescriptor<Reading>()) == 2 }
            let attic = try XCTUnwrap(main.fetch(FetchDescriptor<Reading>(predicate: #Predicate { $0.sensor == "attic" })).first)
            XCTAssertEqual(attic.value, 12)

            // The history has both processes' transactions, with their authors and process IDs.
            let history = try main.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
            XCTAssertEqual(history.map(\.author), ["test", "peer", "peer"])
            let theirs = history.filter { $0.author == "peer" }
            XCTAssertEqual(Set(theirs.map(\.processIdentifier)), [String(peer.process.processIdentifier)])
            XCTAssertNotEqual(history[0].processIdentifier, theirs[0].processIdentifier)
            guard case .update(let update as DefaultHistoryUpdate<Reading>) = theirs[0].changes.first else {
                return XCTFail("the first transaction of the peer is not an update of a Reading: \(theirs[0].changes)")
            }
            XCTAssertEqual(update.changedPersistentIdentifier, boiler.persistentModelID)
            XCTAssertEqual(update.updatedAttributes, [\Reading.value])
            guard case .insert(let insert as DefaultHistoryInsert<Reading>) = theirs[1].changes.first else {
                return XCTFail("the second transaction of the peer is not an insert of a Reading: \(theirs[1].changes)")
            }
            XCTAssertTrue(main.model(for: insert.changedPersistentIdentifier) === attic)
            XCTAssertEqual(try peer.send("quit"), "bye")
        }
    }

    @MainActor
    func testADurableConsumerOfSwiftDataModelsHandlesEachTransactionOnceAcrossAKill() async throws {
        try await withSharedContainer { container in
            let main = container.mainContext
            let alerts = { try main.fetch(FetchDescriptor<Alert>(sortBy: [SortDescriptor(\.token)])) }
            var consumer = try peer("alerter-1")
            XCTAssertEqual(try consumer.send("consume alerter"), "consuming")
            for (sensor, value) in [("boiler", 10.0), ("attic", 50), ("cellar", 60)] {
                main.insert(Reading(sensor: sensor, value: value))
                try main.save()
            }
            try await waitForMerges(of: container) { try alerts().count == 2 }

            // Killed, then started again: it resumes after its position, and repeats nothing.
            consumer.kill()
            main.insert(Reading(sensor: "garage", value: 70))
            try main.save()
            main.insert(Reading(sensor: "porch", value: 5))
            try main.save()
            consumer = try peer("alerter-2")
            XCTAssertEqual(try consumer.send("consume alerter"), "consuming")
            try await waitForMerges(of: container) { try alerts().count >= 3 }

            let raised = try alerts()
            XCTAssertEqual(raised.map(\.sensor), ["attic", "cellar", "garage"])
            XCTAssertEqual(raised.map(\.value), [50, 60, 70])
            XCTAssertEqual(Set(raised.map(\.token)).count, 3, "each alert comes from a transaction of its own")
            // Each alert names the transaction that inserted its reading.
            let history = try main.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
            for alert in raised {
                let transaction = try XCTUnwrap(history.first { $0.token.tokenValue == alert.token })
                let inserted = transaction.changes.compactMap { change -> String? in
                    guard case .insert(let insert as DefaultHistoryInsert<Reading>) = change else { return nil }
                    return (main.model(for: insert.changedPersistentIdentifier) as? Reading)?.sensor
                }
                XCTAssertEqual(inserted, [alert.sensor])
            }
            XCTAssertEqual(try consumer.send("quit"), "bye")
        }
    }

    func testAConsumerNeedsAContainerThatSharesItsStore() throws {
        let container = try ModelContainer(for: Reading.self, Alert.self, configurations: ModelConfiguration(url: scratch.file("alone.store")))
        XCTAssertNil(container.sharing)
        XCTAssertThrowsError(try ModelChangeConsumer(name: "alerter", container: container)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .loadIssueModelContainer)
        }
    }
}
