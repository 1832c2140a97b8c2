import AmbarStack
import Foundation
import XCTest

/// The durable change ledger: written in the save's own transaction, read by token, with
/// per-consumer cursors, purging and the history-expired signal.
final class LedgerTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testEverySaveWritesOneTransactionWithItsChanges() throws {
        XCTAssertEqual(try coordinator.currentHistoryToken(), 0)
        let context = privateContext("ledger-writer")
        context.transactionAuthor = "importer"
        let saves = Collector<DidSaveNotification>()
        let observation = context.observeDidSave { saves.append($0) }
        defer { observation.cancel() }
        let (a, b): (ManagedObjectID, ManagedObjectID) = try context.performAndWait {
            let a = try context.insert(Employee.self)
            a.name = "A"
            let b = try context.insert(Employee.self)
            b.name = "B"
            try context.save()
            a.salary = 5
            try context.delete(b)
            try context.save()
            return (a.objectID, b.objectID)
        }
        let history = try coordinator.history(after: 0)
        XCTAssertEqual(history.map(\.token), [1, 2])
        XCTAssertEqual(saves.all.map(\.token), [1, 2], "did-save carries the token")
        XCTAssertEqual(history[0].inserted, [a, b])
        XCTAssertEqual(history[0].author, "importer")
        XCTAssertEqual(history[0].contextName, "ledger-writer")
        XCTAssertEqual(history[0].processID, getpid())
        XCTAssertEqual(history[1].updated, [a])
        XCTAssertEqual(history[1].updatedProperties[a], ["salary"])
        XCTAssertEqual(history[1].deleted, [b])
        XCTAssertEqual(try coordinator.currentHistoryToken(), 2)
        XCTAssertEqual(try coordinator.history(after: 1).map(\.token), [2])
        XCTAssertEqual(try coordinator.history(after: 0, limit: 1).map(\.token), [1])
    }

    func testFailedSavesWriteNothingAndBatchesAreRecorded() throws {
        _ = try seedEmployee("A", email: "a@x")
        let context = privateContext()
        try context.performAndWait {
            let dup = try context.insert(Employee.self)
            dup.name = "dup"
            dup.email = "a@x"
            XCTAssertThrowsError(try context.save())
            try context.rollback()
            let inserted = try context.batchInsert(entityName: "Employee", rows: [["name": .string("B")]])
            XCTAssertEqual(inserted.token, 2)
            let updated = try context.batchUpdate(FetchRequest<Employee>(), set: ["salary": .double(1)])
            XCTAssertEqual(updated.token, 3)
            let deleted = try context.batchDelete(FetchRequest<Employee>(predicate: Key<String>("name") == "B"))
            XCTAssertEqual(deleted.token, 4)
        }
        let history = try coordinator.history(after: 0)
        XCTAssertEqual(history.map(\.token), [1, 2, 3, 4], "the failed save left no transaction")
        XCTAssertEqual(history[2].updated.count, 2)
        XCTAssertEqual(Set(history[2].updatedProperties.values.flatMap { $0 }), ["salary"])
        XCTAssertEqual(history[3].deleted.count, 1)
    }

    func testCursorsHoldBackPurgingAndExpiredConsumersAreTold() throws {
        for i in 0..<5 { _ = try seedEmployee("E\(i)") }
        try coordinator.setHistoryCursor(consumer: "slow", token: 2)
        try coordinator.setHistoryCursor(consumer: "fast", token: 5)
        XCTAssertEqual(try coordinator.historyCursors().map(\.consumer), ["fast", "slow"])
        XCTAssertEqual(try coordinator.purgeHistory(through: 5), 2, "purging stops at the oldest live cursor")
        XCTAssertEqual(try coordinator.history(after: 2).map(\.token), [3, 4, 5])
        XCTAssertThrowsError(try coordinator.history(after: 1)) {
            XCTAssertEqual($0 as? AmbarError, .historyExpired(after: 1, purgedThrough: 2))
        }
        // A consumer not seen within the lease no longer holds the ledger back.
        XCTAssertEqual(try coordinator.purgeHistory(through: 5, lease: -1), 5)
        XCTAssertThrowsError(try coordinator.history(after: 2)) {
            guard case .historyExpired(2, 5) = $0 as? AmbarError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(try coordinator.history(after: 5), [])
        XCTAssertEqual(try coordinator.currentHistoryToken(), 5, "tokens survive purging")
        _ = try seedEmployee("next")
        XCTAssertEqual(try coordinator.history(after: 5).map(\.token), [6], "and are never reused")
        try coordinator.removeHistoryCursor(consumer: "slow")
        XCTAssertEqual(try coordinator.historyCursors().map(\.consumer), ["fast"])
    }

    func testAnotherProcessesSaveIsInTheLedgerAndMergesFromIt() throws {
        let id = try seedEmployee("Mine", salary: 1)
        let viewer = privateContext("viewer")
        try viewer.performAndWait { _ = (try viewer.existingObject(with: id) as? Employee)?.salary }
        let before = try coordinator.currentHistoryToken()
        let result = try HelperProcess.run(["set", try storeArgument(), id.uriString, "salary=d:42"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let history = try coordinator.history(after: before)
        XCTAssertEqual(history.count, 1)
        XCTAssertNotEqual(history[0].processID, getpid())
        XCTAssertEqual(history[0].contextName, "helper")
        XCTAssertEqual(history[0].updated, [id])
        viewer.mergeChanges(fromContextDidSave: history[0].notification)
        viewer.performAndWait {
            XCTAssertEqual((viewer.registeredObject(for: id) as? Employee)?.salary, 42)
        }
    }
}

extension LedgerTests {
    /// Tokens are visible in commit order: writers on several connections save at once while a
    /// follower reads "everything after my cursor" again and again. If a transaction holding a
    /// lower token could commit after one holding a higher token, the follower would pass it and
    /// never see it. Each token must be seen exactly once, in order.
    func testAFollowerNeverSkipsATokenWhileWritersOnSeveralConnectionsCommit() throws {
        let writers = 6
        let savesEach = 60
        let coordinators = try (0..<writers).map { _ in try PersistentStoreCoordinator(model: model, store: try store()) }
        let seen = Locked<[Int64]>([])
        let readErrors = Locked<[String]>([])
        let writing = Locked(true)
        let followed = DispatchSemaphore(value: 0)
        let reader: PersistentStoreCoordinator = coordinator
        let follower = Thread {
            var cursor: Int64 = 0
            let deadline = Date().addingTimeInterval(300)
            while Date() < deadline {
                let finished = !writing.withLock { $0 }
                do {
                    let page = try reader.history(after: cursor)
                    seen.withLock { $0 += page.map(\.token) }
                    cursor = page.last?.token ?? cursor
                    if finished && page.isEmpty { break }
                } catch {
                    readErrors.withLock { $0.append("\(error)") }
                    break
                }
            }
            followed.signal()
        }
        follower.start()
        let errors = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: writers) { w in
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinators[w], name: "writer\(w)")
            for n in 0..<savesEach {
                do {
                    try context.performAndWait { () throws(AmbarError) in
                        let employee = try context.insert(Employee.self)
                        employee.name = "w\(w)-\(n)"
                        try context.save()
                    }
                } catch {
                    errors.withLock { $0.append("writer \(w), save \(n): \(error)") }
                }
            }
        }
        writing.withLock { $0 = false }
        XCTAssertEqual(followed.wait(timeout: .now() + 300), .success, "the follower read past the last commit")
        XCTAssertEqual(readErrors.withLock { $0 }, [], "no ledger read failed")
        XCTAssertEqual(errors.withLock { $0 }, [], "no save failed")
        XCTAssertEqual(seen.withLock { $0 }, Array(1...Int64(writers * savesEach)), "every token exactly once, in order")
    }
}
