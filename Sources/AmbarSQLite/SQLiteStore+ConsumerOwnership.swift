import AmbarCore
import Foundation
import GRDB

/// Durable consumers' ownership leases in `ambar_consumer_owners`: one row per consumer that runs
/// with one (its owner's identity, the epoch, when it lapses). Every process on the store shares
/// the host's clock, which the expiry is read against.
extension SQLiteStore {
    package func claimConsumer(_ consumer: String, owner: ConsumerOwner, lease: TimeInterval) throws(AmbarError) -> ConsumerClaim {
        try write("claim a consumer's ownership") { db -> ConsumerClaim in
            let now = Date().timeIntervalSince1970
            // Taken when free or lapsed (the epoch grows), renewed when already this owner's.
            let taken = try Row.fetchOne(
                db,
                sql: """
                    INSERT INTO ambar_consumer_owners AS o (consumer, owner, epoch, expires) VALUES (?, ?, 1, ?)
                    ON CONFLICT(consumer) DO UPDATE SET
                        epoch = CASE WHEN o.owner = excluded.owner THEN o.epoch ELSE o.epoch + 1 END,
                        owner = excluded.owner, expires = excluded.expires
                    WHERE o.owner = excluded.owner OR o.expires <= ?
                    RETURNING epoch, expires
                    """, arguments: [consumer, owner.id, now + lease, now])
            // Standby records: lapsed ones go; the caller's is renewed while the consumer is held
            // by another copy, and removed once it takes it.
            try db.execute(sql: "DELETE FROM ambar_consumer_standbys WHERE expires <= ?", arguments: [now])
            if let taken {
                try db.execute(sql: "DELETE FROM ambar_consumer_standbys WHERE consumer = ? AND owner = ?", arguments: [consumer, owner.id])
                return .owned(
                    ConsumerOwnership(consumer: consumer, owner: owner, epoch: taken["epoch"], expires: Date(timeIntervalSince1970: taken["expires"])))
            }
            guard let holder = try Self.ownership(db, consumer) else {
                throw AmbarError.storage(
                    operation: "claim a consumer's ownership", code: 0, message: "the ownership of '\(consumer)' was neither taken nor found")
            }
            try db.execute(
                sql: "INSERT OR REPLACE INTO ambar_consumer_standbys (consumer, owner, expires) VALUES (?, ?, ?)",
                arguments: [consumer, owner.id, now + lease])
            return .heldByAnother(holder)
        }
    }

    @discardableResult
    package func releaseConsumer(_ consumer: String, owner: ConsumerOwner) throws(AmbarError) -> Bool {
        try write("release a consumer's ownership") { db -> Bool in
            // Lapsed at once, the row kept: the next owner's epoch still grows.
            try db.execute(
                sql: "UPDATE ambar_consumer_owners SET expires = 0 WHERE consumer = ? AND owner = ? AND expires > 0", arguments: [consumer, owner.id])
            let released = db.changesCount > 0
            try db.execute(sql: "DELETE FROM ambar_consumer_standbys WHERE consumer = ? AND owner = ?", arguments: [consumer, owner.id])
            return released
        }
    }

    package func consumerStandbys() throws(AmbarError) -> [ConsumerStandby] {
        try readOneStatement("read consumers' standbys") { db in
            try Row.fetchAll(
                db, sql: "SELECT consumer, owner, expires FROM ambar_consumer_standbys WHERE expires > ? ORDER BY consumer, owner",
                arguments: [Date().timeIntervalSince1970]
            ).compactMap { row in
                ConsumerOwner(id: row["owner"]).map {
                    ConsumerStandby(consumer: row["consumer"], owner: $0, expires: Date(timeIntervalSince1970: row["expires"]))
                }
            }
        }
    }

    package func consumerOwnerships() throws(AmbarError) -> [ConsumerOwnership] {
        try readOneStatement("read consumers' ownership") { db in
            try Row.fetchAll(db, sql: "SELECT consumer, owner, epoch, expires FROM ambar_consumer_owners ORDER BY consumer").compactMap(Self.ownership)
        }
    }

    /// `consumer`'s ownership row, if any.
    static func ownership(_ db: Database, _ consumer: String) throws -> ConsumerOwnership? {
        try Row.fetchOne(db, sql: "SELECT consumer, owner, epoch, expires FROM ambar_consumer_owners WHERE consumer = ?", arguments: [consumer])
            .flatMap(ownership)
    }

    /// A row of `ambar_consumer_owners` (nil when its owner is not an identity Ambar wrote).
    private static func ownership(_ row: Row) -> ConsumerOwnership? {
        guard let owner = ConsumerOwner(id: row["owner"]) else { return nil }
        return ConsumerOwnership(consumer: row["consumer"], owner: owner, epoch: row["epoch"], expires: Date(timeIntervalSince1970: row["expires"]))
    }
}
