import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// Which processes serve the hub: `SharingConfiguration.mayServeHub`.
final class HubHostingTests: SharedStoreTestCase {
    /// A process that may not serve the hub never takes it, even when no hub answers; it keeps
    /// waiting, and connects once another process serves the hub.
    @MainActor
    func testAProcessThatMayNotServeTheHubWaitsForOne() async throws {
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "guest")
        var configuration = SharingConfiguration.sharedDirectory(directory.url)
        configuration.mayServeHub = false
        configuration.pollInterval = 0.05
        let sync = try await SharedStoreSync.start(stack: stack, configuration: configuration)
        // Ten polls without a hub (each one a moment where this process could have taken it).
        var waited = 0
        while sync.ledgerChecks < 10 && waited < 400 {
            try await Task.sleep(nanoseconds: 50_000_000)
            waited += 1
        }
        XCTAssertGreaterThanOrEqual(sync.ledgerChecks, 10, "it polled the ledger, finding no hub")
        XCTAssertFalse(sync.servesHub, "no process served the hub, and this one may not")
        XCTAssertFalse(sync.isConnected)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent(".ambar/sync.sock").path))

        // Another process, which may serve the hub, starts sharing: it serves the hub, the guest
        // connects, and the other process's save reaches the guest.
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }
        XCTAssertTrue(try writer.await("status", timeout: 20) { $0.contains("hub=true") }.contains("hub=true"), writer.log)
        waited = 0
        while !sync.isConnected && waited < 400 {
            try await Task.sleep(nanoseconds: 50_000_000)
            waited += 1
        }
        XCTAssertTrue(sync.isConnected, "connected to the hub the other process serves")
        XCTAssertFalse(sync.servesHub)
        let head = try XCTUnwrap(try writer.send("insert a 1").split(separator: " ").last.flatMap { Int64($0) })
        waited = 0
        while sync.mergedThrough < head && waited < 400 {
            try await Task.sleep(nanoseconds: 50_000_000)
            waited += 1
        }
        XCTAssertEqual(sync.mergedThrough, head, "the guest merged the other process's save")
        await sync.stop()
    }
}
