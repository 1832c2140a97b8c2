import AmbarCore
import AmbarDataStack
import Foundation

/// How `watch` prints one ledger transaction: the JSON object of `watch --json` (also the data of
/// the HTTP change stream's events), or a line for people.
enum TransactionLine {
    /// `token`, `author`, `pid`, `instance`, `inserted`, `updated`, `deleted` (object URIs,
    /// sorted), `latency_ms` (from its commit to now) and `history_expired` (false).
    static func json(_ transaction: HistoryTransaction, now: Date = Date()) -> [String: Any] {
        [
            "token": transaction.token, "author": transaction.author ?? NSNull(), "pid": Int(transaction.processID),
            "instance": transaction.instanceID.map(InstanceID.text) ?? NSNull(),
            "inserted": uris(transaction.inserted), "updated": uris(transaction.updated), "deleted": uris(transaction.deleted),
            "latency_ms": max(0, now.timeIntervalSince(transaction.timestamp)) * 1000, "history_expired": false,
        ]
    }

    /// A line for people: token, pid, author, counts, latency and the first object URIs.
    static func text(
        token: Int64, processID: Int32, author: String?, inserted: Set<ManagedObjectID>, updated: Set<ManagedObjectID>,
        deleted: Set<ManagedObjectID>, latency: TimeInterval
    ) -> String {
        let some = uris(inserted.union(updated).union(deleted)).prefix(5).joined(separator: " ")
        return
            "token \(token)  pid \(processID)  \(author ?? "-")  +\(inserted.count) ~\(updated.count) -\(deleted.count)  \(String(format: "%.2f", latency * 1000)) ms  \(some)"
    }

    static func uris(_ ids: Set<ManagedObjectID>) -> [String] { ids.map(\.uriString).sorted() }
}
