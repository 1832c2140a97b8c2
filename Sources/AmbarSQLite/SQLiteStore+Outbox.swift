import AmbarCore
import Foundation
import GRDB

/// The outbox (`ambar_outbox`): messages durable consumers recorded with their position moves,
/// until they are sent.
extension SQLiteStore {
    /// - Throws: ``AmbarError/storage(operation:code:message:cause:)`` for a row whose columns are
    ///   not what Ambar writes (a message is never skipped unsent).
    package func outboxMessages(consumer: String, limit: Int) throws(AmbarError) -> [OutboxMessage] {
        try readOneStatement("read the outbox") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, consumer, key, topic, payload, token, recorded, attempts, last_error, not_before
                    FROM ambar_outbox WHERE consumer = ? ORDER BY id LIMIT ?
                    """, arguments: [consumer, limit]
            ).map { row in
                // Decoded with errors, not traps: a row written outside Ambar fails the read, naming the column.
                OutboxMessage(
                    id: try row.decode(forColumn: "id"), consumer: try row.decode(forColumn: "consumer"), key: try row.decode(forColumn: "key"),
                    topic: try row.decode(forColumn: "topic"), payload: try row.decode(Data?.self, forColumn: "payload") ?? Data(),
                    token: try row.decode(forColumn: "token"), recorded: Date(timeIntervalSince1970: try row.decode(forColumn: "recorded")),
                    attempts: try row.decode(forColumn: "attempts"), lastError: try row.decode(forColumn: "last_error"),
                    notBefore: Date(timeIntervalSince1970: try row.decode(forColumn: "not_before")))
            }
        }
    }

    package func outboxCount(consumer: String) throws(AmbarError) -> Int {
        try readOneStatement("count the outbox") { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM ambar_outbox WHERE consumer = ?", arguments: [consumer]) ?? 0
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
