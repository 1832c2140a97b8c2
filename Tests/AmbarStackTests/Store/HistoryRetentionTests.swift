import AmbarStack
import Foundation
import XCTest

/// A retention purges the ledger by age, never past a consumer seen within its lease; removes the
/// merge positions of processes gone longer than their lease and receipts past their own
/// retention; keeps durable consumers' positions; and
/// lets the store's size level off under steady load. Time is passed in (`now:`), not waited for.
final class HistoryRetentionTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private func save(_ count: Int, key: String? = nil) throws {
        // One transaction per object, the last one keyed when `key` is given.
        let context = privateContext("retention-writer")
        try context.performAndWait { () throws(AmbarError) in
            for index in 0..<count {
                let employee = try context.insert(Employee.self)
                employee.name = "E\(index)"
                if let key, index == count - 1 { try context.save(idempotencyKey: key) } else { try context.save() }
            }
        }
    }

    func testAgedTransactionsGoButNeverPastALiveConsumer() throws {
        try save(10)
        let retention = HistoryRetention(history: 60, consumerLease: 3_600)
        // Now: nothing is a minute old.
        XCTAssertEqual(try coordinator.purgeHistory(retention).transactionsRemoved, 0)
        // A consumer at token 4, seen just now, holds the rest back an hour later.
        try coordinator.setHistoryCursor(consumer: "viewer", token: 4)
        let later = Date().addingTimeInterval(120)
        let held = try coordinator.purgeHistory(retention, now: later)
        XCTAssertEqual(held.purgedThrough, 4)
        XCTAssertEqual(held.transactionsRemoved, 4)
        XCTAssertEqual(try coordinator.history(after: 4).map(\.token), Array(5...10))
        XCTAssertThrowsError(try coordinator.history(after: 3)) { error in
            guard case AmbarError.historyExpired(after: 3, purgedThrough: 4) = error else { return XCTFail("\(error)") }
        }
        // Past the lease the consumer no longer holds history back, and the history goes; its
        // position stays (it is durable), so when it comes back it learns what it missed.
        let muchLater = Date().addingTimeInterval(7_200)
        let gone = try coordinator.purgeHistory(retention, now: muchLater)
        XCTAssertEqual(gone.cursorsRemoved, 0, "a durable consumer's position is never removed by purging")
        XCTAssertEqual(gone.purgedThrough, 10)
        XCTAssertEqual(try coordinator.historyCursors().map(\.consumer), ["viewer"])
        XCTAssertThrowsError(try coordinator.history(after: try XCTUnwrap(try coordinator.historyCursor(consumer: "viewer")).token)) { error in
            guard case AmbarError.historyExpired(after: 4, purgedThrough: 10) = error else { return XCTFail("\(error)") }
        }
        let summary = try coordinator.historySummary()
        XCTAssertEqual(summary.transactions, 0)
        XCTAssertNil(summary.oldestToken)
        XCTAssertEqual(summary.headToken, 10, "tokens are never reused: the head stays")
        try save(1)
        XCTAssertEqual(try coordinator.history(after: 10).map(\.token), [11])
    }

    /// A sharing process's merge position holds history back only within its own, short lease,
    /// and purging removes it after that: a process that died delays purging by at most its lease.
    func testAMergePositionHoldsHistoryOnlyWithinItsLeaseAndIsRemovedAfterIt() throws {
        try save(6)
        let retention = HistoryRetention(history: 60, consumerLease: 86_400, processLease: 120)
        try coordinator.setHistoryCursor(consumer: "viewer-pid-17", token: 2, lease: retention.effectiveProcessLease)
        let cursor = try XCTUnwrap(try coordinator.historyCursor(consumer: "viewer-pid-17"))
        XCTAssertFalse(cursor.isDurable)
        XCTAssertEqual(cursor.lease, 120)
        XCTAssertEqual(try coordinator.purgeHistory(retention).transactionsRemoved, 0, "now: nothing is old (this purge marks the head)")
        // Within its lease (a minute and a half after it was recorded) it holds history back.
        let within = try coordinator.purgeHistory(retention, now: Date().addingTimeInterval(90))
        XCTAssertEqual(within.purgedThrough, 2)
        XCTAssertEqual(within.cursorsRemoved, 0)
        // Past it (three minutes), although well within the consumer lease: removed, history purged.
        let past = try coordinator.purgeHistory(retention, now: Date().addingTimeInterval(180))
        XCTAssertEqual(past.cursorsRemoved, 1)
        XCTAssertEqual(past.purgedThrough, 6)
        XCTAssertNil(try coordinator.historyCursor(consumer: "viewer-pid-17"))
    }

    /// A merge position recorded by a process whose clock was a year ahead, which then crashed:
    /// it ages by the purging process's clock from the first purge that sees it, and goes after
    /// its lease — it does not hold history back for a year.
    func testAPositionFromAClockAheadAgesByThePurgersClock() throws {
        try save(6)
        let retention = HistoryRetention(history: 60, consumerLease: 86_400, processLease: 120)
        try coordinator.setHistoryCursor(consumer: "skewed-pid-9", token: 2, lease: retention.effectiveProcessLease)
        try rawExecute("UPDATE ambar_cursors SET last_seen = last_seen + 31536000 WHERE consumer = 'skewed-pid-9'")
        XCTAssertEqual(try coordinator.purgeHistory(retention).transactionsRemoved, 0, "now: nothing is old (this purge marks the head)")
        let within = try coordinator.purgeHistory(retention, now: Date().addingTimeInterval(90))
        XCTAssertEqual(within.purgedThrough, 2, "within its lease (by this clock) it holds history back")
        let past = try coordinator.purgeHistory(retention, now: Date().addingTimeInterval(180))
        XCTAssertEqual(past.cursorsRemoved, 1, "past its lease by this clock it goes, although its own clock said a year ahead")
        XCTAssertEqual(past.purgedThrough, 6)
    }

    func testReceiptsExpireAfterTheirOwnRetention() throws {
        try save(1, key: "inbox/file-1")
        XCTAssertNotNil(try coordinator.savedToken(forIdempotencyKey: "inbox/file-1"))
        let retention = HistoryRetention(history: 60, consumerLease: 60, receipts: 86_400)
        XCTAssertEqual(try coordinator.purgeHistory(retention, now: Date().addingTimeInterval(3_600)).receiptsRemoved, 0)
        XCTAssertNotNil(try coordinator.savedToken(forIdempotencyKey: "inbox/file-1"), "kept while younger than its retention")
        XCTAssertEqual(try coordinator.purgeHistory(retention, now: Date().addingTimeInterval(2 * 86_400)).receiptsRemoved, 1)
        XCTAssertNil(try coordinator.savedToken(forIdempotencyKey: "inbox/file-1"))
    }

    func testARetentionThatIsNotPositiveIsRefused() throws {
        XCTAssertThrowsError(try coordinator.purgeHistory(HistoryRetention(history: 0))) { error in
            guard case AmbarError.invalidArgument(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("history"), message)
        }
    }

    /// Under steady load (each round inserts 100 objects one save at a time and deletes them
    /// again) with purges, the ledger's row count and the file's size level off: freed pages are
    /// reused. Without the purges the ledger would add 200 transactions a round.
    func testTheStoreLevelsOffUnderSteadyLoadWithPurges() throws {
        guard backend == .sqlite else { throw XCTSkip("measures the SQLite file's size; the PostgreSQL server manages its own") }
        let retention = HistoryRetention(history: 1, consumerLease: 60)
        let context = privateContext("steady")
        var sizes: [Int] = []
        var clock = Date()
        for _ in 0..<12 {
            try context.performAndWait { () throws(AmbarError) in
                var inserted: [Employee] = []
                for index in 0..<100 {
                    let employee = try context.insert(Employee.self)
                    employee.name = "E\(index)"
                    try context.save()
                    inserted.append(employee)
                }
                for employee in inserted {
                    try context.delete(employee)
                    try context.save()
                }
            }
            clock = clock.addingTimeInterval(10)
            try coordinator.checkpoint(.truncate)  // (its marker transaction is purged too)
            // The purge that first sees the round's transactions marks them; the one a retention
            // later (by the purging process's clock) removes them.
            try coordinator.purgeHistory(retention, now: clock)
            try coordinator.purgeHistory(retention, now: clock.addingTimeInterval(2))
            XCTAssertEqual(try coordinator.historySummary().transactions, 0, "every round's transactions are purged")
            sizes.append(((try FileManager.default.attributesOfItem(atPath: directory.file().path)[.size]) as? NSNumber)?.intValue ?? 0)
        }
        XCTAssertEqual(try coordinator.historySummary().headToken, 12 * 200 + 12, "200 saves and one checkpoint marker a round")
        XCTAssertLessThanOrEqual(sizes[11], sizes[3] + 8_192, "the file levels off: \(sizes)")
    }
}
