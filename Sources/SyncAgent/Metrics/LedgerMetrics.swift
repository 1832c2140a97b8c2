import AmbarCore
import AmbarDataStack
import CoreMetrics
import Foundation
import Logging

/// The store, as gauges read at each scrape: the ledger's head, the oldest transaction kept and
/// their number, the purges so far; each consumer's or sharing process's lag in transactions and
/// in seconds (`consumer` and `kind` labels, as `sync-agent consumers` shows them); an SQLite
/// store's WAL size, or a server's notification queue and listeners.
enum LedgerMetrics {
    static let head = Gauge(label: "ambar_ledger_head_token")
    static let oldest = Gauge(label: "ambar_ledger_oldest_token")
    static let transactions = Gauge(label: "ambar_ledger_transactions")
    static let purges = Gauge(label: "ambar_ledger_purges")
    /// Set to 1 when the last scrape could not read the ledger (the store out of reach), else 0.
    static let unreadable = Gauge(label: "ambar_ledger_unreadable")
    /// The size of an SQLite store's write-ahead log.
    static let walBytes = Gauge(label: "ambar_wal_bytes")
    /// A store on a server: how full the server's notification queue is (0…1), and how many
    /// sessions listen for the store's notifications (one per host's hub).
    static let serverQueueUsage = Gauge(label: "ambar_server_notification_queue_usage")
    static let serverListeners = Gauge(label: "ambar_server_listeners")
    static let logger = Logger(label: "ambar.agent.metrics")
    /// The cursors whose lag the last scrape reported, by their labels: a cursor gone since (a
    /// consumer removed, a process's cursor expired) has its series removed, not left frozen.
    private static let reported = Locked<[CursorLabels: [Gauge]]>([:])

    private struct CursorLabels: Hashable {
        let consumer: String
        let kind: String
    }

    /// Reads the ledger of `coordinator` into the gauges.
    static func collect(_ coordinator: PersistentStoreCoordinator) {
        do {
            let summary = try coordinator.historySummary()
            head.record(summary.headToken)
            oldest.record(summary.oldestToken ?? summary.headToken)
            transactions.record(summary.transactions)
            purges.record(summary.purges)
            let now = Date()
            var current: [CursorLabels: [Gauge]] = [:]
            for cursor in try coordinator.historyCursors() {
                let labels = CursorLabels(consumer: cursor.consumer, kind: cursor.isDurable ? "consumer" : "process")
                let dimensions = [("consumer", labels.consumer), ("kind", labels.kind)]
                let lag = try CursorLag(token: cursor.token, head: summary.headToken, coordinator, now: now)
                let tokens = Gauge(label: "ambar_consumer_lag_tokens", dimensions: dimensions)
                let seconds = Gauge(label: "ambar_consumer_lag_seconds", dimensions: dimensions)
                tokens.record(lag.tokens)
                seconds.record(lag.seconds)
                current[labels] = [tokens, seconds]
            }
            let gone = reported.withLock { reported in
                defer { reported = current }
                return reported.filter { current[$0.key] == nil }.flatMap(\.value)
            }
            for gauge in gone { gauge.destroy() }
            if case .sqlite(let url) = coordinator.storeDescription {
                let wal = url.path + "-wal"
                // try?: no -wal file (checkpointed away) holds 0 bytes
                walBytes.record((try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? NSNumber)?.intValue ?? 0)
            }
            if let server = try coordinator.serverStatus() {
                serverQueueUsage.record(server.notificationQueueUsage)
                serverListeners.record(server.listeners)
            }
            unreadable.record(0)
        } catch {
            unreadable.record(1)
            logger.warning("metrics: the ledger could not be read", metadata: ["error": "\(error)"])
        }
    }
}
