// Built with the package trait HTTP (a default trait); without it, `--metrics` is refused.
#if HTTP
    /// The `# HELP` line of each metric family `--metrics` serves: the meaning `docs/metrics.md`
    /// gives it (a test holds the two equal). Prometheus's own `promtool check metrics` wants one
    /// for every family; swift-metrics has no place for it, so the lines are added to the text
    /// the registry emits.
    enum MetricsHelp {
        /// By family name.
        static let texts: [String: String] = [
            "ambar_saves_total": "saves this process committed",
            "ambar_save_failures_total": "saves the store refused or failed (conflicts, constraints, storage errors)",
            "ambar_saved_objects_total": "objects inserted, updated or deleted by committed saves",
            "ambar_save_duration_seconds": "how long the store took to commit a save (the transaction, not the context's work)",
            "ambar_merges_total": "other processes' transactions merged into this process's main context",
            "ambar_merge_latency_seconds": "from a transaction's commit (its ledger timestamp) to its merge in this process",
            "ambar_doorbells_received_total": "messages this process received from the hub",
            "ambar_bell_rings_received_total": "rings of the shared-memory bell this process heard",
            "ambar_doorbells_rejected_total":
                "messages this process did not believe: their claim disagrees with the ledger (the ledger's transactions are merged, never the messages')",
            "ambar_ledger_checks_found_missed_total":
                "periodic ledger checks that found other processes' transactions no doorbell had brought (a hub down, a dropped frame)",
            "ambar_hub_peers": "processes the hub serves (the hub's process only)",
            "ambar_hub_relayed_frames_total": "did-save messages the hub relayed to a peer",
            "ambar_hub_dropped_frames_total": "frames the hub did not send to a peer that was not keeping up (it catches up from the ledger)",
            "ambar_hub_frames_left_to_the_bell_total": "frames the hub did not send to a peer because the sender's shared-memory bell woke it already",
            "ambar_hub_refused_connections_total": "connections the hub refused: credentials, another store or version, the peer limit, no descriptors left",
            "ambar_purges_total": "ledger purges this process ran (the hub's process)",
            "ambar_purged_transactions_total": "ledger transactions those purges removed",
            "ambar_wal_checkpoints_total":
                "checkpoints of an SQLite store's write-ahead log by the hub's process: mode passive (every 5 s) or truncate (after 10 s idle), result done or deferred (a reader or writer held it off; tried again)",
            "ambar_server_doorbell_listening": "a store on a server: 1 while the hub's LISTEN connection listens, 0 while it connects again",
            "ambar_ledger_head_token": "the newest transaction's token",
            "ambar_ledger_oldest_token": "the oldest transaction kept (the head when none is)",
            "ambar_ledger_transactions": "transactions the ledger keeps",
            "ambar_ledger_purges": "purges the store has recorded since it was created",
            "ambar_ledger_unreadable": "1 when the last scrape could not read the ledger (the store out of reach), else 0",
            "ambar_wal_bytes": "the size of an SQLite store's write-ahead log",
            "ambar_server_notification_queue_usage": "a store on a server: how full the server's notification queue is, 0 to 1 (pg_notification_queue_usage())",
            "ambar_server_listeners": "a store on a server: the sessions listening for the store's notifications (one per host's hub)",
            "ambar_consumer_lag_tokens":
                "transactions a position has not processed: the head minus its token (kind is consumer for a durable consumer, process for a sharing process's merge position, as sync-agent consumers shows them)",
            "ambar_consumer_lag_seconds": "seconds since the oldest transaction the position has not processed committed (0 at the head)",
            "ambar_inbox_files_imported_total": "inbox files run --name AGENT imported",
            "ambar_inbox_objects_imported_total": "objects inserted or updated by those files",
            "ambar_inbox_files_failed_total": "files moved to failed/ (a bad line, a file too large)",
            "ambar_inbox_files_waiting": "files in the inbox",
            "ambar_inbox_retrying":
                "1 while a file waits for the store to take it again, with the kind of error the store gave (storage, storeBusy…); the series of an earlier reason goes back to 0",
            "ambar_serve_stream_pages_total":
                "pages of ledger transactions read for serve's change streams: reader shared by the one reader every stream that keeps up shares, own by a stream catching up on its own (behind the shared reader, or let go by it)",
            "ambar_serve_stream_encodings_total":
                "the events the shared reader made: one per page and audience followed (the unfiltered streams, each distinct filter), however many streams share them",
            "ambar_serve_streams_detached_total":
                "change streams the shared reader let go for being behind by more than their queue holds (--stream-queue, --stream-queue-total): each then reads the ledger on its own until it catches up",
            "ambar_serve_stream_queued_bytes": "bytes waiting in the change streams' queues (events waiting for several streams counted once)",
        ]

        /// `exposition` (Prometheus's text format) with a `# HELP` line before each family's
        /// `# TYPE` line; a family without a text here gets one that names the documentation.
        static func annotate(_ exposition: [UInt8]) -> [UInt8] {
            var output: [UInt8] = []
            output.reserveCapacity(exposition.count + texts.count * 100)
            for line in exposition.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                if line.starts(with: Array("# TYPE ".utf8)) {
                    let name = String(decoding: line.dropFirst(7).prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self)
                    let text = texts[name] ?? "an Ambar metric: see docs/metrics.md"
                    output += Array("# HELP \(name) \(text)\n".utf8)
                }
                output += line
                output.append(UInt8(ascii: "\n"))
            }
            // The split gave one more (empty) line after the last newline.
            if exposition.last == UInt8(ascii: "\n") || exposition.isEmpty { output.removeLast() }
            return output
        }
    }
#endif
