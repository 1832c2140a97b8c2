import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// Read your writes across processes: a save's token (`lastSavedToken`), handed to another
/// process, which waits until its main context holds that transaction.
final class ReadYourWritesTests: SharedStoreTestCase {
    /// Item `uid`'s `value` as the main context holds it now: a registered object, not read again.
    @MainActor
    private func heldValue(_ item: ManagedObject, in main: ManagedObjectContext) throws -> Int64? {
        try main.performAndWait { () throws(AmbarError) -> Int64? in
            guard case .integer(let value) = try item.value(forKey: "value") else { return nil }
            return value
        }
    }

    @MainActor
    private func mainItem(_ uid: String, in main: ManagedObjectContext) throws -> ManagedObject {
        try XCTUnwrap(
            try main.performAndWait { () throws(AmbarError) -> ManagedObject? in
                try main.fetch(FetchRequest<ManagedObject>(entityName: "Item", predicate: Key<String>("uid") == uid)).first
            })
    }

    /// Another process updates an object this one holds, and says the token: until this process
    /// serves its main queue the object is as it was; `waitUntilMerged` returns once the merge is
    /// in it. No doorbell reaches this process (it shares through a directory of its own, with its
    /// ledger check an hour apart): only `waitUntilMerged`'s own ledger read brings the change.
    @MainActor
    func testAnotherProcesssSaveIsInTheMainContextOnceWaitUntilMergedReturns() async throws {
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "reader")
        let apart = try TemporaryDirectory()
        var configuration = SharingConfiguration.sharedDirectory(apart.url)
        configuration.ledgerCheckInterval = .seconds(3600)
        let sync = try await SharedStoreSync.start(stack: stack, configuration: configuration)
        let connected = try await waitFor { sync.isConnected }
        XCTAssertTrue(connected, "serves its own hub: the ledger is checked an hour apart")
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }
        let inserted = try XCTUnwrap(Int64(try writer.send("insert u1 1").dropFirst("ok ".count)))
        XCTAssertGreaterThan(inserted, 0, "the helper replies with its importer's lastSavedToken")
        try await sync.waitUntilMerged(token: inserted, timeout: .seconds(20))
        let main = try stack.mainContext
        let item = try mainItem("u1", in: main)
        XCTAssertEqual(try heldValue(item, in: main), 1)

        // The main queue is not served while the writer answers: no merge can have run.
        let updated = try XCTUnwrap(Int64(try writer.send("update u1 2").dropFirst("ok ".count)))
        XCTAssertGreaterThan(updated, inserted)
        XCTAssertEqual(try heldValue(item, in: main), 1, "not merged before the main queue runs")
        await Task.yield()
        XCTAssertEqual(try heldValue(item, in: main), 1, "no doorbell reaches this process")
        try await sync.waitUntilMerged(token: updated, timeout: .seconds(20))
        XCTAssertEqual(try heldValue(item, in: main), 2, "merged once waitUntilMerged returned")
        XCTAssertGreaterThanOrEqual(sync.mergedThrough, updated)
        // A token already held returns at once.
        try await sync.waitUntilMerged(token: inserted, timeout: .seconds(20))
        await sync.stop()
    }

    /// This process's own save from another context: its token, and the main context holds it
    /// once `waitUntilMerged` returns (the merge from the saving context, not the ledger's).
    @MainActor
    func testAnOwnSaveFromAnotherContextIsInTheMainContextOnceWaitUntilMergedReturns() async throws {
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "own")
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
        let importer = try stack.importerContext()
        XCTAssertNil(importer.lastSavedToken, "no save yet")
        try importer.performAndWait { () throws(AmbarError) in
            let item = try importer.insertObject(entityName: "Item")
            try item.setValue(.string("own"), forKey: "uid")
            try item.setValue(.integer(1), forKey: "value")
            try importer.save()
        }
        let first = try XCTUnwrap(importer.lastSavedToken)
        try await sync.waitUntilMerged(token: first, timeout: .seconds(20))
        let main = try stack.mainContext
        let item = try mainItem("own", in: main)
        try importer.performAndWait { () throws(AmbarError) in
            for mine in try importer.fetch(FetchRequest<ManagedObject>(entityName: "Item")) { try mine.setValue(.integer(7), forKey: "value") }
            try importer.save()
        }
        let second = try XCTUnwrap(importer.lastSavedToken)
        XCTAssertEqual(second, first + 1)
        XCTAssertEqual(try heldValue(item, in: main), 1, "not merged before the main queue runs")
        try await sync.waitUntilMerged(token: second, timeout: .seconds(20))
        XCTAssertEqual(try heldValue(item, in: main), 7)
        await sync.stop()
    }

    /// A token no transaction has: a typed error at the time limit, naming what the process
    /// holds; a token below 1 and a timeout that is not positive are refused; after `stop()`
    /// nothing more is waited for.
    @MainActor
    func testATokenThatNeverArrivesIsATypedErrorAtTheTimeLimit() async throws {
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "waiting")
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
        let head = try stack.writerCoordinator.currentHistoryToken()
        do {
            try await sync.waitUntilMerged(token: head + 100, timeout: .milliseconds(300))
            XCTFail("a token beyond the head is not held")
        } catch {
            guard case .notMergedYet(let token, let held, let waited) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(token, head + 100)
            XCTAssertEqual(held, head)
            XCTAssertGreaterThanOrEqual(waited, 0.29)
            XCTAssertTrue("\(error)".contains("through token \(head)"), "\(error)")
        }
        for (token, timeout) in [(Int64(0), Duration.seconds(1)), (1, .zero)] {
            do {
                try await sync.waitUntilMerged(token: token, timeout: timeout)
                XCTFail("token \(token), timeout \(timeout) accepted")
            } catch {
                guard case .invalidArgument = error else { return XCTFail("\(error)") }
            }
        }
        let waiting = Task { () -> AmbarError? in
            do {
                try await sync.waitUntilMerged(token: head + 100, timeout: .seconds(600))
                return nil
            } catch { return error as? AmbarError }
        }
        await sync.stop()
        let ended = await waiting.value
        guard case .notMergedYet = ended else { return XCTFail("a wait ends with sharing, typed: \(String(describing: ended))") }
    }
}
