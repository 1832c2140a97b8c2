/// What the chaos loop did, and when (CLOCK_REALTIME ns).
struct ChaosTimeline {
    struct Kill {
        let slot: String
        let pid: Int32
        let at: Int64
        /// Whether the process served the hub.
        let wasHub: Bool
    }

    struct Freeze {
        let slot: String
        let pid: Int32
        let from: Int64
        let to: Int64
        let wasHub: Bool
    }

    /// From the hub process's kill until a new hub answered; `to` is nil when none did in time.
    struct FailOver {
        let from: Int64
        let to: Int64?
    }

    var kills: [Kill] = []
    var freezes: [Freeze] = []
    var failOvers: [FailOver] = []
    /// Processes that ended on their own, with their wait status.
    var crashes: [(slot: String, pid: Int32, status: Int32)] = []
    /// Restarts that failed (the slot then stays empty, so it would report no digest).
    var failedRestarts: [String] = []
    /// When another SQLite client held the write lock (every writer waits then).
    var lockHolds: [(from: Int64, to: Int64)] = []

    /// Whether a fault could have delayed a transaction committed at `from` by `sender` and merged
    /// at `to` by `receiver`: either end frozen, the sender killed, the hub down or frozen, or the
    /// write lock held by another client.
    func faultOverlaps(from: Int64, to: Int64, sender: Int32, receiver: Int32) -> Bool {
        func overlaps(_ a: Int64, _ b: Int64) -> Bool { a <= to && b >= from }
        if freezes.contains(where: { ($0.pid == sender || $0.pid == receiver || $0.wasHub) && overlaps($0.from, $0.to) }) { return true }
        if kills.contains(where: { $0.pid == sender && overlaps($0.at, $0.at) }) { return true }
        if lockHolds.contains(where: { overlaps($0.from, $0.to) }) { return true }
        return failOvers.contains { overlaps($0.from, $0.to ?? Int64.max) }
    }
}
