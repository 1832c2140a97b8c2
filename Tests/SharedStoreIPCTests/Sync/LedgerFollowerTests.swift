import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

@testable import SharedStoreIPC

/// The ledger follower alone, without a hub: doorbells ring it from any thread, it reads the
/// ledger, and whatever a doorbell claims is only checked against the ledger.
final class LedgerFollowerTests: SharedStoreTestCase {
    private func makeFollower(events: ObserverList<RemoteMergeEvent> = ObserverList<RemoteMergeEvent>()) throws -> (LedgerFollower, DataStack) {
        let stack = try DataStack.open(model: .model(try itemModel()), storeURL: directory.store, name: "follower")
        let follower = LedgerFollower(
            coordinator: try stack.writerCoordinator, main: try stack.mainContext, positionName: "follower-test",
            lease: 240, readsRowsAhead: true, events: events)
        follower.start(at: try stack.writerCoordinator.currentHistoryToken())
        return (follower, stack)
    }

    func testDoorbellsAreCheckedAgainstTheLedgerAndNeverMoveTheCursorPastIt() throws {
        let (follower, stack) = try makeFollower()
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }
        let token = try XCTUnwrap(Int64(try writer.send("insert u1 1").dropFirst("ok ".count)))
        let coordinator = try stack.writerCoordinator
        let truth = try XCTUnwrap(try coordinator.history(after: token - 1, limit: 1).first)

        // A doorbell that names the right token but another instance: the ledger's transaction
        // is followed, the claim counted as a disagreement.
        follower.ring(Doorbell(token: token, instanceID: 99, claim: nil))
        XCTAssertEqual(follower.cursor, token, "the ledger's transaction was followed")
        XCTAssertEqual(follower.rejectedDoorbells, 1)

        // A doorbell far ahead: nothing to read, the cursor stays.
        follower.ring(Doorbell(token: token + 100, instanceID: truth.instanceID, claim: nil))
        XCTAssertEqual(follower.cursor, token)

        // The next transaction, rung with a claim of deletions it does not hold.
        let next = try XCTUnwrap(Int64(try writer.send("insert u2 2").dropFirst("ok ".count)))
        let forged = DidSaveNotification(inserted: [], updated: [], deleted: truth.inserted, author: "forger", token: next)
        follower.ring(Doorbell(token: next, instanceID: truth.instanceID, claim: forged))
        XCTAssertEqual(follower.cursor, next)
        XCTAssertEqual(follower.rejectedDoorbells, 2, "the claim disagreed with the ledger")

        // An honest doorbell agrees.
        let third = try XCTUnwrap(Int64(try writer.send("update u1 5").dropFirst("ok ".count)))
        let honest = try XCTUnwrap(try coordinator.history(after: third - 1, limit: 1).first)
        follower.ring(Doorbell(token: third, instanceID: honest.instanceID, claim: honest.notification))
        XCTAssertEqual(follower.cursor, third)
        XCTAssertEqual(follower.rejectedDoorbells, 2, "an honest claim is not counted")

        XCTAssertEqual(try writer.send("quit"), "bye")
        follower.stop()
        XCTAssertFalse(try coordinator.historyCursors().contains { $0.consumer == "follower-test" }, "a per-process cursor is removed at stop")
    }

    /// This process's own transaction is stepped over, another process's merged: only the
    /// latter is reported (the events are posted on the main queue after the merge).
    @MainActor
    func testThisProcessesOwnTransactionsAreSkippedByInstance() async throws {
        let events = ObserverList<RemoteMergeEvent>()
        let merged = Locked<[Int64]>([])
        let observation = events.add { event in merged.withLock { $0.append(event.token) } }
        defer { observation.cancel() }
        let (follower, stack) = try makeFollower(events: events)
        let context = try stack.importerContext()
        let token = try context.performAndWait { () throws(AmbarError) -> Int64 in
            let item = try context.insertObject(entityName: "Item")
            try item.setValue(.string("mine"), forKey: "uid")
            try context.save()
            return try stack.writerCoordinator.currentHistoryToken()
        }
        let mine = try XCTUnwrap(try stack.writerCoordinator.history(after: token - 1, limit: 1).first)
        XCTAssertTrue(mine.isFromThisProcess)
        XCTAssertEqual(mine.instanceID, ProcessInstance.id)
        let writer = try Peer("writer", directory: directory)
        defer { writer.kill() }
        let theirs = try XCTUnwrap(Int64(try writer.send("insert theirs 1").dropFirst("ok ".count)))
        follower.follow()
        XCTAssertEqual(follower.cursor, theirs, "both followed")
        for _ in 0..<400 where merged.withLock({ $0 }).isEmpty { try await Task.sleep(for: .milliseconds(25)) }  // the main queue runs meanwhile
        XCTAssertEqual(merged.withLock { $0 }, [theirs], "the other process's transaction was merged and reported, this process's (\(token)) stepped over")
        XCTAssertEqual(follower.rejectedDoorbells, 0)
    }
}
