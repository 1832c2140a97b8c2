import AmbarStack
import Foundation
import GRDBSQLite
import XCTest

/// Opening a store that is already prepared for the model takes no write lock: a process starts
/// while another SQLite client holds the lock longer than the busy timeout (found by the soak: a
/// restarted process failed with "database is locked").
final class OpenUnderWriteLockTests: StoreTestCase {
    func testAPreparedStoreOpensWhileAnotherClientHoldsTheWriteLock() throws {
        let url = directory.file()
        var lock: OpaquePointer?
        XCTAssertEqual(sqlite3_open_v2(url.path, &lock, SQLITE_OPEN_READWRITE, nil), SQLITE_OK)
        defer { sqlite3_close_v2(lock) }
        XCTAssertEqual(sqlite3_exec(lock, "BEGIN IMMEDIATE", nil, nil, nil), SQLITE_OK)
        defer { sqlite3_exec(lock, "ROLLBACK", nil, nil, nil) }
        // Before, this waited for the lock until the busy timeout and threw "database is locked".
        let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(url))
        XCTAssertEqual(coordinator.storeIdentifier, self.coordinator.storeIdentifier)
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        XCTAssertEqual(try reader.performAndWait { () throws(AmbarError) in try reader.count(for: FetchRequest<Employee>(entityName: "Employee")) }, 0)
    }
}
