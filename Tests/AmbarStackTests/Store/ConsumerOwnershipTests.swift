import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A durable consumer's ownership lease in the store: one owner at a time, renewed by it, taken
/// by another only once it lapsed (or was released), each change of hands a new epoch; a save
/// fenced by an epoch that is no longer the consumer's writes nothing.
final class ConsumerOwnershipTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private let first = ConsumerOwner(host: "host-a", pid: 101, started: Date(timeIntervalSince1970: 1_796_000_000.125))
    private let second = ConsumerOwner(host: "host-b", pid: 202, started: Date(timeIntervalSince1970: 1_796_000_001.5))

    private struct NotOwned: Error { let claim: ConsumerClaim }

    /// The ownership `claim` gave; throws (failing the test) when another owner holds it.
    private func owned(_ claim: ConsumerClaim) throws -> ConsumerOwnership {
        guard case .owned(let ownership) = claim else { throw NotOwned(claim: claim) }
        return ownership
    }

    func testOneOwnerAtATimeRenewedByItAndHandedOverOnRelease() throws {
        let taken = try owned(try coordinator.claimConsumer("mailer", owner: first, lease: 60))
        XCTAssertEqual(taken.owner, first)
        XCTAssertEqual(taken.epoch, 1)
        XCTAssertGreaterThan(taken.expires, Date().addingTimeInterval(50))

        guard case .heldByAnother(let holder) = try coordinator.claimConsumer("mailer", owner: second, lease: 60) else {
            return XCTFail("a second owner took a held consumer")
        }
        XCTAssertEqual(holder, taken, "the standby learns who holds it, until when")

        let renewed = try owned(try coordinator.claimConsumer("mailer", owner: first, lease: 120))
        XCTAssertEqual(renewed.epoch, 1, "renewing keeps the epoch")
        XCTAssertGreaterThan(renewed.expires, taken.expires)

        XCTAssertFalse(try coordinator.releaseConsumer("mailer", owner: second), "only the owner releases")
        XCTAssertTrue(try coordinator.releaseConsumer("mailer", owner: first))
        let handedOver = try owned(try coordinator.claimConsumer("mailer", owner: second, lease: 60))
        XCTAssertEqual(handedOver.epoch, 2, "a new owner is a new epoch")
        XCTAssertEqual(try coordinator.consumerOwnerships(), [handedOver])
        XCTAssertEqual(ConsumerOwner(id: second.id), second, "the identity reads back")
    }

    /// A claim that finds the consumer held records its caller as standing by, renewed at each
    /// claim; taking the consumer, or releasing, removes the record; one not renewed lapses.
    func testACopyThatFindsTheConsumerHeldIsRecordedAsStandingByUntilItTakesOverOrLeaves() throws {
        let third = ConsumerOwner(host: "host-c", pid: 303, started: Date(timeIntervalSince1970: 1_796_000_002))
        _ = try owned(try coordinator.claimConsumer("mailer", owner: first, lease: 60))
        XCTAssertEqual(try coordinator.consumerStandbys(), [], "the owner is not a standby")
        _ = try coordinator.claimConsumer("mailer", owner: second, lease: 60)
        _ = try coordinator.claimConsumer("mailer", owner: third, lease: 60)
        let standbys = try coordinator.consumerStandbys()
        XCTAssertEqual(Set(standbys.map(\.owner)), [second, third])
        XCTAssertTrue(standbys.allSatisfy { $0.consumer == "mailer" && $0.expires > Date().addingTimeInterval(50) }, "\(standbys)")
        _ = try coordinator.claimConsumer("other", owner: second, lease: 60)
        XCTAssertEqual(try coordinator.consumerStandbys().filter { $0.consumer == "other" }, [], "it took the free one")

        XCTAssertFalse(try coordinator.releaseConsumer("mailer", owner: third), "a standby holds no lease")
        XCTAssertEqual(try coordinator.consumerStandbys().map(\.owner), [second], "but leaves no record behind")
        XCTAssertTrue(try coordinator.releaseConsumer("mailer", owner: first))
        _ = try owned(try coordinator.claimConsumer("mailer", owner: second, lease: 60))
        XCTAssertEqual(try coordinator.consumerStandbys(), [], "the standby that took over is a standby no more")

        // A record that its copy does not renew lapses with the lease it gave.
        _ = try coordinator.claimConsumer("mailer", owner: third, lease: 0.3)
        XCTAssertEqual(try coordinator.consumerStandbys().map(\.owner), [third])
        XCTAssertTrue(eventually(timeout: 20) { (try? self.coordinator.consumerStandbys()) == [] }, "lapsed after 0.3 s")
    }

    func testALapsedLeaseIsTakenOverAndOnlyThen() throws {
        let lease = 0.5
        let taken = try owned(try coordinator.claimConsumer("indexer", owner: first, lease: lease))
        var takeover: ConsumerOwnership?
        let deadline = Date().addingTimeInterval(20)
        while takeover == nil, Date() < deadline {
            switch try coordinator.claimConsumer("indexer", owner: second, lease: 60) {
            case .owned(let ownership): takeover = ownership
            case .heldByAnother(let holder): XCTAssertEqual(holder.owner, first)
            }
            if takeover == nil { Thread.sleep(forTimeInterval: 0.02) }  // polling a clock-driven lease
        }
        let ownership = try XCTUnwrap(takeover, "the lapsed lease was taken within 20 s")
        XCTAssertEqual(ownership.epoch, taken.epoch + 1)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince1970 + 0.05, taken.expires.timeIntervalSince1970, "not before it lapsed")
        guard case .heldByAnother(let holder) = try coordinator.claimConsumer("indexer", owner: first, lease: lease) else {
            return XCTFail("the former owner took it back while the new lease runs")
        }
        XCTAssertEqual(holder.owner, second)
    }

    func testASaveFencedByAFormerEpochWritesNothing() throws {
        let stale = try owned(try coordinator.claimConsumer("alerter", owner: first, lease: 60))
        let context = privateContext("consumer")
        try context.performAndWait { () throws(AmbarError) in
            let employee = try context.insert(Employee.self)
            employee.name = "effect-1"
            try context.save(movingConsumer: "alerter", from: nil, to: 0, fencedBy: stale)
        }
        XCTAssertTrue(try coordinator.releaseConsumer("alerter", owner: first))
        let current = try owned(try coordinator.claimConsumer("alerter", owner: second, lease: 60))

        try context.performAndWait { () throws(AmbarError) in
            let employee = try context.insert(Employee.self)
            employee.name = "effect-2"
            XCTAssertThrowsError(try context.save(movingConsumer: "alerter", from: 0, to: 1, fencedBy: stale)) { error in
                XCTAssertEqual(error as? AmbarError, .consumerLeaseLost(consumer: "alerter", holder: "\(self.second)"))
            }
            XCTAssertTrue(context.hasChanges, "a refused save keeps the context's changes")
            try context.rollback()
        }
        XCTAssertThrowsError(try coordinator.moveConsumer("alerter", from: 0, to: 1, fencedBy: stale)) { error in
            XCTAssertEqual(error as? AmbarError, .consumerLeaseLost(consumer: "alerter", holder: "\(self.second)"))
        }
        XCTAssertEqual(try coordinator.historyCursor(consumer: "alerter")?.token, 0, "the position did not move")
        XCTAssertThrowsError(try coordinator.moveConsumer("other", from: nil, to: 1, fencedBy: current), "another consumer's ownership fences nothing") {
            guard case .invalidArgument? = $0 as? AmbarError else { return XCTFail("\($0)") }
        }
        XCTAssertNil(try coordinator.historyCursor(consumer: "other"))
        try coordinator.moveConsumer("alerter", from: 0, to: 1, fencedBy: current)
        XCTAssertEqual(try coordinator.historyCursor(consumer: "alerter")?.token, 1)
        let names = try context.performAndWait { () throws(AmbarError) in
            try context.fetch(FetchRequest<Employee>()).map(\.name).sorted()
        }
        XCTAssertEqual(names, ["effect-1"], "nothing of the fenced save was written")
    }
}
