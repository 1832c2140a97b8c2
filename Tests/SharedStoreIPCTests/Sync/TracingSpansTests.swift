import AmbarCore
import AmbarStack
import AmbarTestSupport
import Foundation
import InMemoryTracing
import SharedStoreIPC
import Tracing
import XCTest

/// The tracer the tests bootstrap (once per test process: the instrumentation system takes one).
private let recordingTracer: InMemoryTracer = {
    let tracer = InMemoryTracer()
    InstrumentationSystem.bootstrap(tracer)
    return tracer
}()

/// Spans with swift-distributed-tracing, recorded by its in-memory tracer: a save, and for a
/// transaction of another process the doorbell, the ledger read and the merge, each with its
/// attributes; a refused save records its error.
final class TracingSpansTests: SharedStoreTestCase {
    @MainActor
    func testSavesDoorbellsLedgerReadsAndMergesAreSpans() async throws {
        let tracer = recordingTracer
        tracer.clearAll()
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "traced")
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }
        let connected = try await waitFor { sync.isConnected }
        XCTAssertTrue(connected, "connected to the hub")

        let reply = try writer.send("burst 3 t")
        let head = try XCTUnwrap(Int64(reply.dropFirst("ok ".count)), reply)
        let merged = try await waitFor { sync.mergedThrough >= head }
        XCTAssertTrue(merged, "the writer's transactions were merged here")

        let main = try stack.mainContext
        let item = try main.insertObject(entityName: "Item")
        try item.setValue("mine", forKey: "uid")
        try main.save()
        main.mergePolicy = .error  // a duplicate uid is refused, not merged
        let duplicate = try main.insertObject(entityName: "Item")
        try duplicate.setValue("mine", forKey: "uid")
        XCTAssertThrowsError(try main.save())
        try main.rollback()
        await sync.stop()

        let spans = tracer.finishedSpans
        func named(_ name: String) -> [FinishedInMemorySpan] { spans.filter { $0.operationName == name } }
        let saves = named("ambar.save")
        XCTAssertTrue(
            saves.contains { $0.attributes["ambar.inserted"]?.toSpanAttribute() == 1 && $0.attributes["ambar.token"] != nil && $0.errors.isEmpty },
            "the save: \(saves.map(\.attributes))")
        XCTAssertTrue(saves.contains { !$0.errors.isEmpty && $0.status?.code == .error }, "the refused save records its error")
        XCTAssertTrue(named("ambar.doorbell").contains { $0.attributes["ambar.token"] != nil }, "a doorbell")
        XCTAssertTrue(
            named("ambar.ledger.read").contains { ($0.attributes["ambar.transactions"]?.toSpanAttribute()).map { $0 != 0 } ?? false },
            "a ledger read that found the writer's transactions")
        XCTAssertTrue(named("ambar.merge").contains { $0.attributes["ambar.transactions"] != nil }, "a merge")
        tracer.clearAll()
    }

    /// Without a tracer no span is started (nil: its attributes are never built); with one, in a
    /// `withTracer` scope as well as bootstrapped, the span is the tracer's.
    func testASpanIsStartedOnlyWhenATracerIsActive() throws {
        withTracer(NoOpTracer()) {
            XCTAssertNil(startSpanIfTracing("ambar.test"), "no span without a tracer")
        }
        let scoped = InMemoryTracer()
        withTracer(scoped) {
            let span = startSpanIfTracing("ambar.test")
            XCTAssertNotNil(span, "a span with a tracer")
            span?.attributes["ambar.token"] = 7
            span?.end()
        }
        let finished = scoped.finishedSpans.filter { $0.operationName == "ambar.test" }
        XCTAssertEqual(finished.count, 1, "the span reached the scoped tracer")
        XCTAssertEqual(finished.first?.attributes["ambar.token"]?.toSpanAttribute(), 7)
    }
}
