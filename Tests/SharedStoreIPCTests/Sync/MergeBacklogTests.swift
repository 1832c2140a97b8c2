import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// A receiver whose main queue falls behind merges its backlog at once.
final class MergeBacklogTests: SharedStoreTestCase {
    /// While the main queue is busy, 300 transactions of another process arrive: afterwards each
    /// is reported once, in ledger order, but merged in a few passes, not 300.
    @MainActor
    func testABusyMainQueueMergesItsBacklogInOnePass() async throws {
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "busy")
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
        let main = try stack.mainContext
        let tokens = MainQueueLog()
        let passes = MainQueueLog()
        let merges = sync.observeRemoteMerges { tokens.entries.append(String($0.token)) }
        let changes = main.observeObjectsDidChange { note in if !note.inserted.isEmpty { passes.entries.append("") } }
        defer {
            merges.cancel()
            changes.cancel()
        }
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }
        var waited = 0
        while !sync.isConnected && waited < 200 {
            try await Task.sleep(nanoseconds: 50_000_000)
            waited += 1
        }
        XCTAssertTrue(sync.isConnected, "connected to the hub before the burst")

        try writer.post("burst 300 b")
        let reply = try writer.receive(timeout: 60)  // the main queue is not served meanwhile
        let head = try XCTUnwrap(Int64(reply.dropFirst("ok ".count)), reply)
        waited = 0
        while sync.mergedThrough < head && waited < 400 {
            usleep(50_000)  // still not serving the main queue
            waited += 1
        }
        XCTAssertEqual(sync.mergedThrough, head)

        waited = 0
        while tokens.entries.count < 300 && waited < 400 {
            try await Task.sleep(nanoseconds: 50_000_000)
            waited += 1
        }
        let reported = tokens.entries.compactMap { Int64($0) }
        XCTAssertEqual(reported.count, 300, "each transaction reported once")
        XCTAssertEqual(reported, reported.sorted(), "in ledger order")
        XCTAssertEqual(Set(reported).count, 300)
        XCTAssertEqual(reported.last, head)
        XCTAssertGreaterThan(passes.entries.count, 0)
        XCTAssertLessThanOrEqual(passes.entries.count, 3, "the backlog was merged in a few passes, not one per transaction")
        await sync.stop()
    }

    /// A process that reads no rows ahead (``SharingConfiguration/readsChangedRowsAhead`` off)
    /// reads them on its main queue instead: its results controller shows every change.
    @MainActor
    func testAProcessThatReadsNoRowsAheadShowsEveryChange() async throws {
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "unhurried")
        var configuration = SharingConfiguration.sharedDirectory(directory.url)
        configuration.readsChangedRowsAhead = false
        let sync = try await SharedStoreSync.start(stack: stack, configuration: configuration)
        let main = try stack.mainContext
        let controller = FetchedResultsController(
            fetchRequest: FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [ObjectSortDescriptor(key: "uid")]), context: main)
        try controller.performFetch()
        let merged = MainQueueLog()
        let merges = sync.observeRemoteMerges { merged.entries.append(String($0.token)) }
        defer { merges.cancel() }
        let stream = sync.remoteMerges()
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }

        let reply = try writer.send("burst 40 n")
        let head = try XCTUnwrap(Int64(reply.dropFirst("ok ".count)), reply)
        var waited = 0
        while merged.entries.last.flatMap({ Int64($0) }) != head && waited < 400 {
            try await Task.sleep(nanoseconds: 50_000_000)
            waited += 1
        }
        XCTAssertEqual(merged.entries.last, String(head), "every transaction merged")
        let shown = try controller.fetchedObjects.map { item -> String in
            guard case .string(let uid) = try item.value(forKey: "uid") else { return "?" }
            return uid
        }
        XCTAssertEqual(shown, (0..<40).map { "n\($0)" }.sorted())
        await sync.stop()

        // Stopping ends the streams: a loop over one finishes after the events it buffered.
        let streamed = Locked<Int?>(nil)
        let loop = Task {
            var count = 0
            for await _ in stream { count += 1 }
            streamed.withLock { $0 = count }
        }
        defer { loop.cancel() }
        waited = 0
        while streamed.withLock({ $0 }) == nil && waited < 200 {
            try await Task.sleep(nanoseconds: 50_000_000)
            waited += 1
        }
        XCTAssertEqual(streamed.withLock { $0 }, 40, "the stream ended with stop(), after the 40 transactions' events")
    }
}
