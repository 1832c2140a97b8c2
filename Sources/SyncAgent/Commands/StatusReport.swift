import Foundation

/// What `sync-agent status` reports: printed as one JSON object (`--json`, the keys below) or as
/// lines for people.
struct StatusReport: Encodable {
    /// The store's location as the command names it (a file, or a server URL without password).
    var store: String
    /// `sqlite` or `postgresql`.
    var backend: String
    /// For a store on a server: the server's state.
    var server: Server?
    /// For a file: its size and its WAL's, in bytes.
    var size: Int?
    var walSize: Int?
    var uuid: String
    var headToken: Int64
    /// Objects per entity (sub-entities counted apart).
    var objects: [String: Int]
    var hub: Hub
    var cursors: [Cursor]
    var history: History
    /// The inboxes of `run` agents in the shared directory (`inbox/NAME/`), by name.
    var inboxes: [Inbox]

    enum CodingKeys: String, CodingKey {
        case store, backend, server, size, uuid, objects, hub, cursors, history, inboxes
        case walSize = "wal_size"
        case headToken = "head_token"
    }

    struct Server: Encodable {
        var location: String
        var version: String
        var listeners: Int
        var notificationQueueUsage: Double

        enum CodingKeys: String, CodingKey {
            case location, version, listeners
            case notificationQueueUsage = "notification_queue_usage"
        }
    }

    struct Hub: Encodable {
        var socket: String
        var reachable: Bool
        var pid: Int?
        var peerCount: Int?
        var peers: [Peer]?
        /// Why the process listening on the socket was not accepted as the hub (another user's
        /// socket, say); absent when none was refused.
        var refused: String?

        enum CodingKeys: String, CodingKey {
            case socket, reachable, pid, peers, refused
            case peerCount = "peer_count"
        }
    }

    struct Peer: Encodable {
        var pid: Int
        var instance: String
        var name: String
        var connectCursor: Int64
        var lastToken: Int64
        /// The peer's recorded ledger position; `null` when it has none yet.
        var ledgerCursor: Int64?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(pid, forKey: .pid)
            try container.encode(instance, forKey: .instance)
            try container.encode(name, forKey: .name)
            try container.encode(connectCursor, forKey: .connectCursor)
            try container.encode(lastToken, forKey: .lastToken)
            try container.encode(ledgerCursor, forKey: .ledgerCursor)  // null, not left out
        }

        enum CodingKeys: String, CodingKey {
            case pid, instance, name
            case connectCursor = "connect_cursor"
            case lastToken = "last_token"
            case ledgerCursor = "ledger_cursor"
        }
    }

    struct Cursor: Encodable {
        var consumer: String
        /// `consumer` (durable) or `process` (a sharing process's merge position).
        var kind: String
        var token: Int64
        /// ISO 8601.
        var lastSeen: String
        var ageSeconds: Double
        /// Transactions committed after its token (the head token minus its token).
        var lagTokens: Int64
        /// How long the oldest transaction it has not read has waited; 0 when it is at the head,
        /// or when that history was purged (then `expired`).
        var lagSeconds: Double
        /// Whether the history after its token was purged: the consumer must reconcile.
        var expired: Bool
        /// For a durable consumer run with an ownership lease, the copy that holds it now
        /// (`pid P on HOST`); nil when none does.
        var active: String?
        /// For a durable consumer, the copies standing by (`pid P on HOST`).
        var standingBy: [String] = []

        enum CodingKeys: String, CodingKey {
            case consumer, kind, token, expired, active
            case standingBy = "standing_by"
            case lastSeen = "last_seen"
            case ageSeconds = "age_seconds"
            case lagTokens = "lag_tokens"
            case lagSeconds = "lag_seconds"
        }
    }

    /// A `run` agent's inbox: files waiting in `inbox/NAME/`, imported into `processed/NAME/`,
    /// and refused into `failed/NAME/` (each with its `.error.txt`).
    struct Inbox: Encodable {
        var name: String
        var waiting: Int
        var processed: Int
        var failed: Int
        /// The newest refused file's name, when there is one.
        var lastFailed: String?
        /// Why one of its folders could not be read (its counts then say nothing of that folder).
        var error: String?

        enum CodingKeys: String, CodingKey {
            case name, waiting, processed, failed, error
            case lastFailed = "last_failed"
        }
    }

    struct History: Encodable {
        /// `null` when the ledger is empty.
        var oldestToken: Int64?
        var headToken: Int64
        var transactions: Int
        var purgedThrough: Int64

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(oldestToken, forKey: .oldestToken)  // null, not left out
            try container.encode(headToken, forKey: .headToken)
            try container.encode(transactions, forKey: .transactions)
            try container.encode(purgedThrough, forKey: .purgedThrough)
        }

        enum CodingKeys: String, CodingKey {
            case oldestToken = "oldest_token"
            case headToken = "head_token"
            case transactions
            case purgedThrough = "purged_through"
        }
    }

    /// The report as one line of JSON, keys sorted (entity names in `objects` as they are).
    func jsonLine() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    /// The report as lines for people.
    var lines: [String] {
        var lines = ["store      \(store)"]
        if let server {
            lines.append("backend    PostgreSQL \(server.version)")
            lines.append("listeners  \(server.listeners) (one per host whose processes share the store)")
            lines.append(String(format: "notify     queue %.1f%% used", server.notificationQueueUsage * 100))
        } else {
            lines.append("backend    SQLite")
            lines.append("size       \(size ?? 0) bytes (WAL \(walSize ?? 0) bytes)")
        }
        lines.append("uuid       \(uuid)")
        lines.append("head token \(headToken)")
        lines.append(
            "ledger     \(history.transactions) transaction(s)\(history.oldestToken.map { ", oldest token \($0)" } ?? ""), purged through \(history.purgedThrough)"
        )
        for (entity, count) in objects.sorted(by: { $0.key < $1.key }) { lines.append("objects    \(entity): \(count)") }
        if hub.reachable {
            lines.append("hub        \(hub.socket): served by pid \(hub.pid.map(String.init) ?? "?"), \(hub.peerCount ?? 0) peer(s)")
            for peer in hub.peers ?? [] {
                lines.append(
                    "peer       pid \(peer.pid) \(peer.name): last token \(peer.lastToken), ledger cursor \(peer.ledgerCursor.map(String.init) ?? "-")")
            }
        } else if let refused = hub.refused {
            lines.append("hub        \(hub.socket): refused: \(refused)")
        } else {
            lines.append("hub        \(hub.socket): not reachable (processes poll the ledger)")
        }
        for cursor in cursors {
            let behind = cursor.expired ? "its history was purged" : "\(cursor.lagTokens) behind"
            var copies = cursor.active.map { ", active: \($0)" } ?? ""
            if !cursor.standingBy.isEmpty { copies += ", standing by: \(cursor.standingBy.joined(separator: "; "))" }
            lines.append("cursor     \(cursor.consumer) (\(cursor.kind)) at \(cursor.token), \(behind) (seen \(Int(cursor.ageSeconds)) s ago)\(copies)")
        }
        for inbox in inboxes {
            let last = inbox.lastFailed.map { " (last: \($0))" } ?? ""
            let error = inbox.error.map { "; \($0)" } ?? ""
            lines.append("inbox      \(inbox.name): \(inbox.waiting) waiting, \(inbox.processed) processed, \(inbox.failed) failed\(last)\(error)")
        }
        return lines
    }
}
