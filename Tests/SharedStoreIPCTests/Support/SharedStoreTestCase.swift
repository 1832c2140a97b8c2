import AmbarStack
import AmbarTestSupport
import Foundation
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
}
