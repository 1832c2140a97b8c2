import AmbarCore
import AmbarSQL
import Foundation

/// Durable consumers' ownership leases in `ambar_consumer_owners`, read against the server's
/// clock (`clock_timestamp()`), so that copies on hosts whose clocks differ agree on when a lease
/// lapses.
extension PostgreSQLStore {
    func claimConsumer(_ consumer: String, owner: ConsumerOwner, lease: TimeInterval) throws(AmbarError) -> ConsumerClaim {
        try write("claim a consumer's ownership") { connection -> ConsumerClaim in
            // Taken when free or lapsed (the epoch grows), renewed when already this owner's.
            let taken = try connection.query(
                """
                INSERT INTO ambar_consumer_owners AS o (consumer, owner, epoch, expires)
                VALUES ($1, $2, 1, extract(epoch FROM clock_timestamp()) + $3)
                ON CONFLICT (consumer) DO UPDATE SET
                    epoch = CASE WHEN o.owner = excluded.owner THEN o.epoch ELSE o.epoch + 1 END,
                    owner = excluded.owner, expires = excluded.expires
                WHERE o.owner = excluded.owner OR o.expires <= extract(epoch FROM clock_timestamp())
                RETURNING epoch, expires
                """, [.text(consumer), .text(owner.id), .real(lease)]
            ).rows.first
            // Standby records: lapsed ones go; the caller's is renewed while the consumer is held
            // by another copy, and removed once it takes it.
            _ = try connection.query("DELETE FROM ambar_consumer_standbys WHERE expires <= extract(epoch FROM clock_timestamp())", [])
            if let taken, let epoch = PostgreSQLValues.integer(taken[0]), let expires = PostgreSQLValues.real(taken[1]) {
                _ = try connection.query("DELETE FROM ambar_consumer_standbys WHERE consumer = $1 AND owner = $2", [.text(consumer), .text(owner.id)])
                return .owned(ConsumerOwnership(consumer: consumer, owner: owner, epoch: epoch, expires: Date(timeIntervalSince1970: expires)))
            }
            let rows = try connection.query("SELECT consumer, owner, epoch, expires FROM ambar_consumer_owners WHERE consumer = $1", [.text(consumer)]).rows
            guard let holder = rows.first.flatMap(Self.ownership) else {
                throw AmbarError.storage(
                    operation: "claim a consumer's ownership", code: 0, message: "the ownership of '\(consumer)' was neither taken nor found")
            }
            _ = try connection.query(
                """
                INSERT INTO ambar_consumer_standbys (consumer, owner, expires) VALUES ($1, $2, extract(epoch FROM clock_timestamp()) + $3)
                ON CONFLICT (consumer, owner) DO UPDATE SET expires = excluded.expires
                """, [.text(consumer), .text(owner.id), .real(lease)])
            return .heldByAnother(holder)
        }
    }

    @discardableResult
    func releaseConsumer(_ consumer: String, owner: ConsumerOwner) throws(AmbarError) -> Bool {
        try write("release a consumer's ownership") { connection in
            // Lapsed at once, the row kept: the next owner's epoch still grows.
            let released =
                try connection.query(
                    "UPDATE ambar_consumer_owners SET expires = 0 WHERE consumer = $1 AND owner = $2 AND expires > 0", [.text(consumer), .text(owner.id)]
                ).affectedRows > 0
            _ = try connection.query("DELETE FROM ambar_consumer_standbys WHERE consumer = $1 AND owner = $2", [.text(consumer), .text(owner.id)])
            return released
        }
    }

    func consumerStandbys() throws(AmbarError) -> [ConsumerStandby] {
        try read(
            "read consumers' standbys",
            "SELECT consumer, owner, expires FROM ambar_consumer_standbys WHERE expires > extract(epoch FROM clock_timestamp()) ORDER BY consumer COLLATE \"C\", owner COLLATE \"C\"",
            []
        ).compactMap { row in
            guard let consumer = PostgreSQLValues.text(row[0]), let owner = PostgreSQLValues.text(row[1]).flatMap(ConsumerOwner.init(id:)),
                let expires = PostgreSQLValues.real(row[2])
            else { return nil }
            return ConsumerStandby(consumer: consumer, owner: owner, expires: Date(timeIntervalSince1970: expires))
        }
    }

    func consumerOwnerships() throws(AmbarError) -> [ConsumerOwnership] {
        try read("read consumers' ownership", "SELECT consumer, owner, epoch, expires FROM ambar_consumer_owners ORDER BY consumer COLLATE \"C\"", [])
            .compactMap(Self.ownership)
    }

    /// A row of `ambar_consumer_owners` (nil when its owner is not an identity Ambar wrote).
    private static func ownership(_ row: [SQLServerValue]) -> ConsumerOwnership? {
        guard let consumer = PostgreSQLValues.text(row[0]), let owner = PostgreSQLValues.text(row[1]).flatMap(ConsumerOwner.init(id:)),
            let epoch = PostgreSQLValues.integer(row[2]), let expires = PostgreSQLValues.real(row[3])
        else { return nil }
        return ConsumerOwnership(consumer: consumer, owner: owner, epoch: epoch, expires: Date(timeIntervalSince1970: expires))
    }
}
