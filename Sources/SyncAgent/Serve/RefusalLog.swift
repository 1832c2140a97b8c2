// Built with the package trait HTTP (a default trait).
#if HTTP
    import Logging
    import Synchronization

    /// Logs refused requests at most once per `interval` for each client address, so that a
    /// client retrying without a token (or a scan) cannot fill the journal: the next line for an
    /// address says how many refusals went unlogged since the last one.
    final class RefusalLog: Sendable {
        /// For each address: when its refusal was last logged, and how many since went unlogged.
        private let entries = Mutex<[String: (logged: ContinuousClock.Instant, unlogged: Int)]>([:])
        private let interval: Duration
        /// The most addresses kept: past it, those not refused for an interval are dropped, then
        /// (a scan from more addresses than that within one interval) the one logged longest ago.
        private let capacity: Int

        /// How many addresses are kept.
        var count: Int { entries.withLock { $0.count } }

        init(interval: Duration = .seconds(60), capacity: Int = 4_096) {
            self.interval = interval
            self.capacity = capacity
        }

        /// Whether a refusal from `address` is to be logged now, and how many refusals from it went
        /// unlogged before it (`nil`: this one is not logged either).
        func shouldLog(_ address: String, now: ContinuousClock.Instant = .now) -> Int? {
            entries.withLock { entries in
                if let entry = entries[address], now - entry.logged < interval {
                    entries[address]?.unlogged += 1
                    return nil
                }
                let unlogged = entries[address]?.unlogged ?? 0
                if entries[address] == nil && entries.count >= capacity {
                    let stale = entries.filter { now - $0.value.logged >= interval }.map(\.key)
                    for key in stale { entries[key] = nil }
                    if entries.count >= capacity, let oldest = entries.min(by: { $0.value.logged < $1.value.logged })?.key {
                        entries[oldest] = nil
                    }
                }
                entries[address] = (now, 0)
                return unlogged
            }
        }
    }
#endif
