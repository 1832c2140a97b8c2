import AmbarCore
import Foundation
import GRDB

/// The outbox (`ambar_outbox`): messages durable consumers recorded with their position moves,
/// until they are sent.
extension SQLiteStore {
    package func outboxMessages(consumer: String, limit: Int) throws(AmbarError) -> [OutboxMessage] {
        try readOneStatement("read the outbox") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, consumer, key, topic, payload, token, recorded, attempts, last_error, not_before
                    FROM ambar_outbox WHERE consumer = ? ORDER BY id LIMIT ?
                    """, arguments: [consumer, limit]
            ).map { row in
                OutboxMessage(
                    id: row["id"], consumer: row["consumer"], key: row["key"], topic: row["topic"], payload: row["payload"] ?? Data(),
                    token: row["token"], recorded: Date(timeIntervalSince1970: row["recorded"]), attempts: row["attempts"],
                    lastError: row["last_error"], notBefore: Date(timeIntervalSince1970: row["not_before"]))
            }
        }
    }

    @discardableResult
    package func removeOutboxMessage(_ message: OutboxMessage) throws(AmbarError) -> Bool {
        try write("remove a sent outbox message") { db -> Bool in
            try db.execute(sql: "DELETE FROM ambar_outbox WHERE id = ? AND key = ?", arguments: [message.id, message.key])
            return db.changesCount > 0
        }
    }

    package func deferOutboxMessage(_ message: OutboxMessage, error: String, until: Date) throws(AmbarError) {
        try write("defer an outbox message") { db in
            try db.execute(
                sql: "UPDATE ambar_outbox SET attempts = attempts + 1, last_error = ?, not_before = ? WHERE id = ? AND key = ?",
                arguments: [error, until.timeIntervalSince1970, message.id, message.key])
        }
    }
}
