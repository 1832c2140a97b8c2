import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// A test case with a fresh shared directory holding an empty item store (`itemModel()`),
/// removed after each test.
class SharedStoreTestCase: XCTestCase {
    var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)
        directory = try TemporaryDirectory()
        _ = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(directory.store))
    }

    override func tearDown() { directory = nil }

    /// Waits (serving the main actor meanwhile) until `condition` holds or `seconds` pass;
    /// whether it held. The caller asserts what it needs.
    @MainActor
    func waitFor(seconds: Double = 20, _ condition: () -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { return false }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        return true
    }
}
