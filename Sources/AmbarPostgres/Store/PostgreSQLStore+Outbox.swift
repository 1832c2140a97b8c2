import AmbarCore
import AmbarSQL
import Foundation

/// The outbox (`ambar_outbox`): messages durable consumers recorded with their position moves,
/// until they are sent.
extension PostgreSQLStore {
    /// - Throws: ``AmbarError/storage(operation:code:message:cause:)`` naming a row whose columns
    ///   are not what Ambar writes (a message is never skipped unsent).
    func outboxMessages(consumer: String, limit: Int) throws(AmbarError) -> [OutboxMessage] {
        let rows = try read(
            "read the outbox",
            """
            SELECT id, consumer, key, topic, payload, token, recorded, attempts, last_error, not_before
            FROM ambar_outbox WHERE consumer = $1 ORDER BY id LIMIT $2
            """, [.text(consumer), .integer(Int64(limit))])
        var messages: [OutboxMessage] = []
        messages.reserveCapacity(rows.count)
        for row in rows {
            guard let id = PostgreSQLValues.integer(row[0]), let consumer = PostgreSQLValues.text(row[1]), let key = PostgreSQLValues.text(row[2]),
                let topic = PostgreSQLValues.text(row[3]), let token = PostgreSQLValues.integer(row[5]), let recorded = PostgreSQLValues.real(row[6]),
                let attempts = PostgreSQLValues.integer(row[7]), let notBefore = PostgreSQLValues.real(row[9])
            else {
                throw .storage(
                    operation: "read the outbox", code: 0,
                    message:
                        "ambar_outbox row \(PostgreSQLValues.integer(row[0]).map(String.init) ?? "?") of consumer '\(consumer)' has a missing or mistyped column; it was written outside Ambar: fix or delete it"
                )
            }
            var payload = Data()
            if case .blob(let data) = row[4] { payload = data }
            messages.append(
                OutboxMessage(
                    id: id, consumer: consumer, key: key, topic: topic, payload: payload, token: token, recorded: Date(timeIntervalSince1970: recorded),
                    attempts: Int(attempts), lastError: PostgreSQLValues.text(row[8]), notBefore: Date(timeIntervalSince1970: notBefore)))
        }
        return messages
    }

    func outboxCount(consumer: String) throws(AmbarError) -> Int {
        let rows = try read("count the outbox", "SELECT count(*) FROM ambar_outbox WHERE consumer = $1", [.text(consumer)])
        guard let count = rows.first.flatMap({ PostgreSQLValues.integer($0[0]) }) else {
            throw .storage(operation: "count the outbox", code: 0, message: "counting the outbox of consumer '\(consumer)' returned no number")
        }
        return Int(count)
    }

    @discardableResult
    func removeOutboxMessage(_ message: OutboxMessage) throws(AmbarError) -> Bool {
        try write("remove a sent outbox message") { connection -> Bool in
            try connection.query("DELETE FROM ambar_outbox WHERE id = $1 AND key = $2", [.integer(message.id), .text(message.key)]).affectedRows > 0
        }
    }

    func deferOutboxMessage(_ message: OutboxMessage, error: String, until: Date) throws(AmbarError) {
        try write("defer an outbox message") { connection in
            _ = try connection.query(
                "UPDATE ambar_outbox SET attempts = attempts + 1, last_error = $1, not_before = $2 WHERE id = $3 AND key = $4",
                [.text(error), .real(until.timeIntervalSince1970), .integer(message.id), .text(message.key)])
        }
    }
}
