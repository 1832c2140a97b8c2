import AmbarStack
import AmbarTestSupport
import Foundation
import GRDBSQLite
import XCTest

/// A position written with a bounded lock wait (a sharing process's merge position: bookkeeping
/// written again at the next check) gives up once another connection has held the lock that long,
/// writes nothing (it says so: false), and leaves the store's other writes waiting as long as before.
final class PositionLockWaitTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    /// Holds a lock that writing a position waits for, with a plain client of the backend, until
    /// the returned closure releases it.
    private func holdLock() throws -> @Sendable () -> Void {
        switch backend {
        case .sqlite:
            let holder = LockHolder()
            XCTAssertEqual(sqlite3_open_v2(directory.file("store.sqlite").path, &holder.connection, SQLITE_OPEN_READWRITE, nil), SQLITE_OK)
            XCTAssertEqual(sqlite3_exec(holder.connection, "BEGIN IMMEDIATE", nil, nil, nil), SQLITE_OK, "took the write lock")
            return {
                sqlite3_exec(holder.connection, "ROLLBACK", nil, nil, nil)
                sqlite3_close_v2(holder.connection)
            }
        case .postgres:
            // A psql session locks the positions' table in a transaction it keeps open while its
            // standard input is; closing it ends the session, which rolls the transaction back.
            let server = try PostgresTestServer.shared()
            let database = try XCTUnwrap(URL(string: try storeArgument())?.lastPathComponent)
            let session = Process()
            session.executableURL = PostgresTestServer.script
            session.arguments = ["psql", server.directory, "-d", database, "-At"]
            let input = Pipe()
            let output = Pipe()
            session.standardInput = input
            session.standardOutput = output
            try session.run()
            addTeardownBlock {
                if session.isRunning {
                    kill(session.processIdentifier, SIGKILL)
                    session.waitUntilExit()
                }
            }
            input.fileHandleForWriting.write(Data("BEGIN;\nLOCK TABLE ambar_cursors IN EXCLUSIVE MODE;\nSELECT 'locked';\n".utf8))
            // Blocks until the line comes, or until psql ends without it (end of file).
            let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
            XCTAssertTrue(said.contains("locked"), "psql locked the positions' table: \(said)")
            return {
                try? input.fileHandleForWriting.close()  // try?: psql may have ended already
                session.waitUntilExit()
            }
        }
    }

    func testABoundedWriteGivesUpWhileTheLockIsHeldAndWritesNothing() throws {
        XCTAssertTrue(try coordinator.setHistoryCursor(consumer: "kept", token: 0, lease: 60, lockWait: 1))
        let release = try holdLock()
        XCTAssertFalse(try coordinator.setHistoryCursor(consumer: "blocked", token: 3, lease: 60, lockWait: 0.2), "the lock was not free in time")
        XCTAssertFalse(try coordinator.removeHistoryCursor(consumer: "kept", lockWait: 0.2), "the lock was not free in time")
        release()
        XCTAssertEqual(try coordinator.historyCursors().map(\.consumer), ["kept"], "nothing was written, nothing removed")

        XCTAssertTrue(try coordinator.setHistoryCursor(consumer: "blocked", token: 3, lease: 60, lockWait: 0.2))
        XCTAssertTrue(try coordinator.removeHistoryCursor(consumer: "kept", lockWait: 0.2))
        XCTAssertEqual(try coordinator.historyCursors().map(\.consumer), ["blocked"], "with the lock free, both are written")
        XCTAssertEqual(try coordinator.historyCursor(consumer: "blocked")?.token, 3)
        XCTAssertEqual(try coordinator.historyCursor(consumer: "blocked")?.lease, 60)
    }

    func testOtherWritesStillWaitForTheLockAfterABoundedOne() throws {
        let release = try holdLock()
        XCTAssertFalse(try coordinator.setHistoryCursor(consumer: "blocked", token: 1, lease: 60, lockWait: 0.1))
        // The lock is released a second later, on another thread; a write without a bound waits
        // for it (the store's busy timeout is ten seconds), as it did before the bounded one.
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) {
            release()
            released.signal()
        }
        try coordinator.setHistoryCursor(consumer: "waited", token: 2)
        released.wait()
        XCTAssertEqual(try coordinator.historyCursor(consumer: "waited")?.token, 2)
    }
}

/// The SQLite connection that holds the lock, released from whichever thread the test releases
/// it on (one thread at a time).
private final class LockHolder: @unchecked Sendable {
    var connection: OpaquePointer?
}
