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
            was purged. --remove NAME forgets a position: a durable consumer of that name then starts \
            afresh, and a running one stops at its next move.
            """)

    @OptionGroup var directory: DirectoryOptions

    @Flag(name: .long, help: "One JSON object per line: consumer, kind, token, lag_tokens, lag_seconds, expired, last_seen, age_seconds, lease_seconds.")
    var json = false

    @Option(name: .long, help: "Remove this consumer's position.")
    var remove: String?

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
        for cursor in try coordinator.historyCursors() {
            let lag = try CursorLag(token: cursor.token, head: head, coordinator, now: now)
            let kind = cursor.isDurable ? "consumer" : "process"
            let age = max(0, now.timeIntervalSince(cursor.lastSeen))
            if json {
                try JSONLine.print([
                    "consumer": cursor.consumer, "kind": kind, "token": cursor.token, "lag_tokens": lag.tokens, "lag_seconds": lag.seconds,
                    "expired": lag.expired, "last_seen": ISO8601DateFormatter().string(from: cursor.lastSeen), "age_seconds": age,
                    "lease_seconds": cursor.lease ?? NSNull(),
                ])
            } else {
                let lagText = lag.expired ? "expired" : "lag \(lag.tokens) (\(String(format: "%.1f", lag.seconds)) s)"
                Swift.print("\(cursor.consumer)  \(kind)  at \(cursor.token)  \(lagText)  seen \(Int(age)) s ago")
            }
        }
    }

}
