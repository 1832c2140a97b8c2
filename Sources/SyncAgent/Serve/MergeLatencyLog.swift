import AmbarCore
import AmbarDataStack
import Foundation
import SharedStoreIPC

/// The commit → merged latency of every transaction `serve` merged from another process over the
/// last ``window`` (at most ``capacity`` of them), answered at `GET /v1/latency` and plotted by the
/// status page.
///
/// Each point is the time of the merge, the transaction's token, and how long after its commit
/// (the ledger's timestamp, written by the committing process's clock) it was merged into the
/// main context here.
final class MergeLatencyLog: Sendable {
    /// One merge, as `/v1/latency` lists it.
    struct Point: Encodable, Sendable {
        /// When it was merged, in seconds since 1970.
        let at: Double
        let token: Int64
        let latencyMilliseconds: Double

        enum CodingKeys: String, CodingKey {
            case at, token
            case latencyMilliseconds = "latency_ms"
        }
    }

    /// The body of `GET /v1/latency`.
    struct Answer: Encodable {
        let windowSeconds: Double
        let points: [Point]

        enum CodingKeys: String, CodingKey {
            case points
            case windowSeconds = "window_seconds"
        }
    }

    static let window: TimeInterval = 600
    static let capacity = 20_000
    /// Points past the window or the capacity are dropped this many at a time, so that a merge
    /// (on the main queue) does not shift the whole array each time.
    private static let trimBatch = 1_024
    private let points: Locked<[Point]>
    private let observation: ContextObservation

    /// Starts recording the merges of `sync`; stops when the log is released.
    init(sync: SharedStoreSync) {
        let points = Locked<[Point]>([])
        self.points = points
        observation = sync.observeRemoteMerges { event in
            let now = Date().timeIntervalSince1970
            points.withLock { points in
                points.append(Point(at: now, token: event.token, latencyMilliseconds: event.latency * 1000))
                let stale = points.firstIndex { $0.at >= now - Self.window } ?? points.count
                let excess = max(stale, points.count - Self.capacity)
                if excess >= Self.trimBatch { points.removeFirst(excess) }
            }
        }
    }

    deinit { observation.cancel() }

    /// The points of the last ``window``, oldest first (at most ``capacity``), as JSON:
    /// `{"window_seconds": 600, "points": [{"at": UNIX_SECONDS, "token": N, "latency_ms": MS}, …]}`.
    func json(now: Date = Date()) throws -> Data {
        let cutoff = now.timeIntervalSince1970 - Self.window
        let recent = points.withLock { $0 }.filter { $0.at >= cutoff }.suffix(Self.capacity)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(Answer(windowSeconds: Self.window, points: Array(recent)))
    }
}
