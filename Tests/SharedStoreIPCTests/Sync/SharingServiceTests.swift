import AmbarStack
import AmbarTestSupport
import Foundation
import ServiceLifecycleTestKit
import SharedStoreIPC
import XCTest

/// Sharing as a swift-service-lifecycle `Service`, driven with the library's test kit (a
/// graceful shutdown triggered in process, no signal): `run()` returns once sharing has stopped,
/// and the hub this process served goes with it.
final class SharingServiceTests: SharedStoreTestCase {
    @MainActor
    func testSharingStopsAtGracefulShutdownAndTheHubItServedGoes() async throws {
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "graceful")
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
        let socket = SharingConfiguration.defaultSocketPath(in: directory.url, environment: [:])
        let served = try await waitFor { sync.isConnected && FileManager.default.fileExists(atPath: socket) }
        XCTAssertTrue(served, "the only process serves the hub, and is connected to it")

        try await Self.runUntilGracefulShutdown(sync)
        XCTAssertFalse(sync.isConnected, "the hub connection is closed")
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "the hub it served stopped, and removed its socket")
        XCTAssertThrowsError(try RawPeer(socket), "nothing listens there any more")
    }

    /// Runs `sync` as a service, triggers its graceful shutdown and waits until `run()` returned.
    private nonisolated static func runUntilGracefulShutdown(_ sync: SharedStoreSync) async throws {
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await sync.run() }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
    }
}
