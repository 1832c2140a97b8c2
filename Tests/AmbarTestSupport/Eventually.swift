import Foundation

/// Waits until `condition` holds: checks it every `interval` until `timeout` has passed, then
/// once more. The one way the tests wait for something another thread or process does.
///
/// Returns whether the condition held; assert on it, so that a wait that runs out fails the test:
///
/// ```swift
/// XCTAssertTrue(eventually { files(in: processed) == ["batch-1.ndjson"] }, "moved to processed")
/// ```
///
/// - Parameters:
///   - timeout: how long to wait at most, in seconds.
///   - interval: how long to sleep between checks, in seconds.
///   - condition: what to wait for; what it throws ends the wait and is rethrown.
public func eventually(timeout: TimeInterval = 20, every interval: TimeInterval = 0.02, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(useconds_t(interval * 1_000_000))
    }
    return try condition()
}

/// ``eventually(timeout:every:_:)`` for a condition that awaits.
public func eventually(timeout: TimeInterval = 20, every interval: TimeInterval = 0.02, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .seconds(interval))  // try?: a cancelled wait checks once more and ends
    }
    return try await condition()
}
