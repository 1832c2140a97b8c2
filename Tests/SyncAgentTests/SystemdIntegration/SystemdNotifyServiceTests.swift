import AmbarCore
import AmbarSystemd
import AmbarTestSupport
import Foundation
import ServiceLifecycleTestKit
import XCTest

/// `SystemdNotifyService` in process, under a test-owned notify socket, its graceful shutdown
/// triggered with swift-service-lifecycle's test kit: READY=1 with the status, STATUS= when it
/// changes, WATCHDOG=1 only while the work is alive, STOPPING=1 at shutdown, and `run()` returns.
/// (The agent's commands run the same service under a real signal in `SystemdTests`.)
final class SystemdNotifyServiceTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        unsetenv("NOTIFY_SOCKET")
        unsetenv("WATCHDOG_USEC")
        directory = nil
    }

    /// The next message on `socket` within 5 s, read off the cooperative pool.
    private func next(_ socket: NotifySocket) async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: socket.receive(until: Date().addingTimeInterval(5))) }
        }
    }

    /// Messages on `socket` for `seconds`, read off the cooperative pool.
    private func messages(_ socket: NotifySocket, for seconds: Double) async -> [String] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let window = Date().addingTimeInterval(seconds)
                var received: [String] = []
                while let message = socket.receive(until: window) { received.append(message) }
                continuation.resume(returning: received)
            }
        }
    }

    func testReadyStatusKeepAlivesWhileAliveAndStoppingAtGracefulShutdown() async throws {
        let notify = try NotifySocket(path: directory.file("notify.sock").path)
        setenv("NOTIFY_SOCKET", notify.path, 1)
        setenv("WATCHDOG_USEC", "200000", 1)  // a keep-alive due every 100 ms
        let status = Locked("starting")
        let alive = Locked(true)
        let service = SystemdNotifyService(status: { status.withLock { $0 } }, isAlive: { alive.withLock { $0 } }, statusInterval: .milliseconds(50))

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.run() }
                let ready = await next(notify)
                XCTAssertEqual(ready, "READY=1\nSTATUS=starting")
                let keepAlive = await next(notify)
                XCTAssertEqual(keepAlive, "WATCHDOG=1", "keep-alives while the work is alive")

                status.withLock { $0 = "busy" }
                var seen = await messages(notify, for: 0.5)
                XCTAssertTrue(seen.contains("STATUS=busy"), "\(seen)")

                alive.withLock { $0 = false }
                _ = await messages(notify, for: 0.2)  // a keep-alive may have been on its way
                seen = await messages(notify, for: 0.5)
                XCTAssertFalse(seen.contains("WATCHDOG=1"), "no keep-alive while the work is not alive: \(seen)")

                trigger.triggerGracefulShutdown()
                let stopping = await next(notify)
                XCTAssertEqual(stopping, "STOPPING=1")
                try await group.waitForAll()  // run() returned
            }
        }
    }
}
