import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation

/// `sync-agent consumers`: the positions kept in the store, with their age and lag; `--remove NAME`
/// forgets one.
struct ConsumersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consumers",
        abstract: "List the ledger positions kept in the store (durable consumers and sharing processes), or remove one.",
        discussion: """
            Each line: the name; its kind, "consumer" (a durable consumer: it resumes from its position \
            and holds history back while seen within the consumer lease) or "process" (a sharing \
            process's merge position: it never resumes and holds history back only within its lease); \
            the token it has processed; its lag, in transactions (the ledger's head minus its token) and \
            in seconds (since the oldest transaction it has not processed committed; 0 when it is at the \
            head); and how long ago it was last recorded. "expired" means history it had not processed \
            was purged. A durable consumer run with an ownership lease (every ChangeConsumer, \
            `watch --consumer`) then says which copy is active: "active pid P on HOST" and when its \
            lease lapses, or "no active copy" once it lapsed (a copy standing by takes over at its \
            next check), and the copies standing by. --remove NAME forgets a position: a durable consumer of that name then starts \
            afresh, and a running one stops at its next move.
            """)

    @OptionGroup var directory: DirectoryOptions

    @Flag(
        name: .long,
        help:
            "One JSON object per line: consumer, kind, token, lag_tokens, lag_seconds, expired, last_seen, age_seconds, lease_seconds (a process's own lease; for a durable consumer, the consumer lease: see --consumer-lease), for a durable consumer standbys (the copies standing by: host, pid, started) and outbox (pending: how many of its messages are not sent yet; next_key, next_recorded, next_attempts, next_last_error: the next to send), and for a consumer with an ownership lease owner (host, pid, started), owner_epoch, owner_lease_remaining_seconds (negative once it lapsed)."
    )
    var json = false

    @Option(name: .long, help: "Remove this consumer's position.")
    var remove: String?

    @Option(
        name: .long,
        help:
            "The consumer lease the process serving the hub purges with, in seconds (its --consumer-lease or the configuration file's consumer-lease; default 86400): a durable consumer's lease_seconds, how long after it was last seen it still holds history back."
    )
    var consumerLease: Double = HistoryRetention.standard.consumerLease

    func validate() throws {
        guard consumerLease > 0, consumerLease.isFinite else { throw ValidationError("--consumer-lease must be a positive number of seconds.") }
    }

    func run() throws {
        bootstrapLogging(level: .warning)
        let stack = try openExistingStack(directory)
        let coordinator = try stack.mainCoordinator
        if let remove {
            guard try coordinator.historyCursor(consumer: remove) != nil else {
                throw ValidationError("no position named '\(remove)' is kept in \(directory.storeDisplay); `sync-agent consumers` lists them")
            }
            try coordinator.removeHistoryCursor(consumer: remove)
            FileHandle.standardError.write(Data("removed \(remove)\n".utf8))
            return
        }
        let head = try coordinator.currentHistoryToken()
        let now = Date()
        let owners = Dictionary(try coordinator.consumerOwnerships().map { ($0.consumer, $0) }, uniquingKeysWith: { first, _ in first })
        let standbys = Dictionary(grouping: try coordinator.consumerStandbys(), by: \.consumer)
        for cursor in try coordinator.historyCursors() {
            let ownership = cursor.isDurable ? owners[cursor.consumer] : nil
            let remaining = ownership.map { $0.expires.timeIntervalSince(now) }
            let lag = try CursorLag(token: cursor.token, head: head, coordinator, now: now)
            let kind = cursor.isDurable ? "consumer" : "process"
            let age = max(0, now.timeIntervalSince(cursor.lastSeen))
            if json {
                var line: [String: Any] = [
                    "consumer": cursor.consumer, "kind": kind, "token": cursor.token, "lag_tokens": lag.tokens, "lag_seconds": lag.seconds,
                    "expired": lag.expired, "last_seen": ISO8601DateFormatter().string(from: cursor.lastSeen), "age_seconds": age,
                    "lease_seconds": cursor.lease ?? consumerLease,
                ]
                if cursor.isDurable {
                    line["standbys"] = (standbys[cursor.consumer] ?? []).map { standby -> [String: Any] in
                        ["host": standby.owner.host, "pid": Int(standby.owner.pid), "started": ISO8601DateFormatter().string(from: standby.owner.started)]
                    }
                    var waiting: [String: Any] = ["pending": try coordinator.outboxCount(consumer: cursor.consumer)]
                    if let next = try coordinator.outboxMessages(consumer: cursor.consumer, limit: 1).first {
                        waiting["next_key"] = next.key
                        waiting["next_recorded"] = ISO8601DateFormatter().string(from: next.recorded)
                        waiting["next_attempts"] = next.attempts
                        waiting["next_last_error"] = next.lastError ?? NSNull()
                    }
                    line["outbox"] = waiting
                }
                if let ownership, let remaining {
                    line["owner"] = [
                        "host": ownership.owner.host, "pid": Int(ownership.owner.pid),
                        "started": ISO8601DateFormatter().string(from: ownership.owner.started),
                    ]
                    line["owner_epoch"] = ownership.epoch
                    line["owner_lease_remaining_seconds"] = remaining
                }
                try JSONLine.print(line)
            } else {
                let lagText = lag.expired ? "expired" : "lag \(lag.tokens) (\(String(format: "%.1f", lag.seconds)) s)"
                var text = "\(cursor.consumer)  \(kind)  at \(cursor.token)  \(lagText)  seen \(Int(age)) s ago"
                if let ownership, let remaining {
                    text +=
                        remaining > 0
                        ? "  active \(ownership.owner) (lease \(String(format: "%.1f", remaining)) s left)"
                        : "  no active copy (lease lapsed \(Int(-remaining)) s ago)"
                }
                if let waiting = standbys[cursor.consumer], !waiting.isEmpty {
                    text += "  standing by: \(waiting.map { "\($0.owner)" }.joined(separator: ", "))"
                }
                if cursor.isDurable {
                    if let next = try coordinator.outboxMessages(consumer: cursor.consumer, limit: 1).first {
                        text += "  outbox \(try coordinator.outboxCount(consumer: cursor.consumer)) waiting"
                        if let error = next.lastError { text += " (next failed \(next.attempts) time(s): \(error))" }
                    }
                }
                Swift.print(text)
            }
        }
    }

}
