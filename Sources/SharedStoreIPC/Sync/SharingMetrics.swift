import CoreMetrics

/// What SharedStoreIPC reports through swift-metrics: merges and their commit → merged latency in
/// this process, doorbells, and, in the process that serves the hub, its peers and frames.
///
/// Nothing is recorded unless the process bootstraps a metrics backend (`MetricsSystem.bootstrap`)
/// before it starts sharing; `sync-agent … --metrics ADDRESS` bootstraps Prometheus. The names,
/// units and meaning of every metric are listed in `docs/metrics.md`.
enum SharingMetrics {
    /// Transactions of other processes merged into this process's main context.
    static let merges = Counter(label: "ambar_merges_total")
    /// From a transaction's commit (its ledger timestamp) to its merge here.
    static let mergeLatency = Timer(label: "ambar_merge_latency_seconds")
    /// Doorbells (did-save messages) this process received from the hub.
    static let doorbellsReceived = Counter(label: "ambar_doorbells_received_total")
    /// Rings of the shared-memory bell this process heard (each one a doorbell too).
    static let bellRingsReceived = Counter(label: "ambar_bell_rings_received_total")
    /// Processes the hub serves now (admitted by their hello).
    static let hubPeers = Gauge(label: "ambar_hub_peers")
    /// Did-save messages the hub relayed to a peer.
    static let hubRelayedFrames = Counter(label: "ambar_hub_relayed_frames_total")
    /// Frames the hub did not send because their receiver was not keeping up (it catches up from
    /// the ledger).
    static let hubDroppedFrames = Counter(label: "ambar_hub_dropped_frames_total")
    /// Frames the hub did not send because the sender's shared-memory bell woke their receiver
    /// already.
    static let hubFramesLeftToTheBell = Counter(label: "ambar_hub_frames_left_to_the_bell_total")
    /// Connections the hub refused (credentials, another store or version, over the peer limit).
    static let hubRefusedConnections = Counter(label: "ambar_hub_refused_connections_total")
    /// Doorbells this process did not believe: their claim disagrees with the ledger (the ledger's
    /// transactions are merged, not the messages').
    static let doorbellsRejected = Counter(label: "ambar_doorbells_rejected_total")
    /// Periodic ledger checks that found transactions of other processes no doorbell had brought.
    static let checksFindingMissedWork = Counter(label: "ambar_ledger_checks_found_missed_total")
    /// 1 while the hub's LISTEN connection to the database server listens, 0 while it connects
    /// or is lost (a store on a server; the hub's process only).
    static let serverListening = Gauge(label: "ambar_server_doorbell_listening")

    /// A checkpoint of the write-ahead log: `mode` passive or truncate, `result` done or deferred.
    static func checkpoint(mode: String, done: Bool) {
        Counter(label: "ambar_wal_checkpoints_total", dimensions: [("mode", mode), ("result", done ? "done" : "deferred")]).increment()
    }

    /// Ledger purges this process ran, and what they removed.
    static let purges = Counter(label: "ambar_purges_total")
    static let purgedTransactions = Counter(label: "ambar_purged_transactions_total")

    /// Records a merged transaction committed `latency` seconds ago.
    static func merged(latency: Double) {
        merges.increment()
        mergeLatency.recordNanoseconds(Int64(max(0, latency) * 1e9))
    }
}
