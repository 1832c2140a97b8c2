import AmbarStack
import AmbarTestSupport
import Foundation
import NIOPosix
import SharedStoreIPC
import XCTest

/// A publisher whose send side fills (a hub that stops reading, a loaded machine) drops frames
/// past its bound — and once the side drains, sends one `tokenOnly` with the newest token it
/// could not send, so the receivers read the ledger through it at once instead of at their next
/// periodic check. (Before, the dropped doorbells were simply lost.)
final class CatchUpDoorbellTests: XCTestCase {
    func testAPublisherWhoseSendSideFilledSendsTheNewestTokenOnceItDrains() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("hub.sock").path
        let hub = try RawListener(path)
        defer { hub.close() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await publish(path: path, hub: hub, group: group)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    private func publish(path: String, hub: RawListener, group: MultiThreadedEventLoopGroup) async throws {
        let store = UUID()
        let hello = Frame.Hello(storeUUID: store, processID: getpid(), instanceID: ProcessInstance.id, processName: "publisher", cursor: 0)
        async let connecting = SyncClient.connect(
            socketPath: path, hello: hello, group: group, maximumSendBacklogBytes: 16 * 1024, onFrame: { _ in }, onClose: {})
        let hubSide = try hub.accept(receiveBuffer: 4096)
        defer { hubSide.close() }
        guard case .hello? = try hubSide.readFrame() else { return XCTFail("no hello") }
        try hubSide.write(try WireFormat.encode(.welcome(.init(hubProcessID: 1, peers: 0))))
        let client = try await connecting

        // The hub reads nothing meanwhile: saves are sent until the bound refuses them, then a
        // few more are refused (the newest token keeps moving).
        func save(_ token: Int64) -> Frame {
            .didSave(
                .init(
                    storeUUID: store, token: token, processID: getpid(), instanceID: ProcessInstance.id, author: nil,
                    changes: ["Item": .init(inserted: Array(1...50).map { $0 + token * 100 })]))
        }
        var token: Int64 = 0
        var refused = 0
        while refused < 20 && token < 100_000 {
            token += 1
            if try !client.send(save(token)) { refused += 1 }
        }
        XCTAssertEqual(refused, 20, "the send side reached its bound")

        // The hub reads again: the last frame it gets is the catch-up doorbell for the newest token.
        var last: Frame?
        while let frame = try hubSide.readFrame(timeout: 10) {
            last = frame
            if case .tokenOnly(_, let newest, _, _) = frame, newest == token { break }
        }
        guard case .tokenOnly(let uuid, let newest, _, _)? = last else {
            return XCTFail("no catch-up doorbell; the last frame was \(String(describing: last))")
        }
        XCTAssertEqual(uuid, store)
        XCTAssertEqual(newest, token, "the newest token the publisher could not send")
        await client.close()
    }
}
