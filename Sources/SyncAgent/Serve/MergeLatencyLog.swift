import AmbarStack
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
    struct Point: Sendable {
        let at: Date
        let token: Int64
        let latency: TimeInterval
    }

    static let window: TimeInterval = 600
    static let capacity = 20_000
    private let points = Locked<[Point]>([])
    private let observation = Locked<ContextObservation?>(nil)

    /// Starts recording the merges of `sync`, until the log is released.
    init(sync: SharedStoreSync) {
        let observation = sync.observeRemoteMerges { [weak self] event in
            self?.record(Point(at: Date(), token: event.token, latency: event.latency))
        }
        self.observation.withLock { $0 = observation }
    }

    private func record(_ point: Point) {
        points.withLock { points in
            points.append(point)
            let cutoff = point.at.addingTimeInterval(-Self.window)
            let stale = points.firstIndex { $0.at >= cutoff } ?? points.count
            let excess = max(stale, points.count - Self.capacity)
            if excess > 0 { points.removeFirst(excess) }
        }
    }

    /// The points of the last ``window``, oldest first, as `GET /v1/latency` answers them:
    /// `{"window_seconds": 600, "points": [{"at": UNIX_SECONDS, "token": N, "latency_ms": MS}, …]}`.
    func json(now: Date = Date()) -> Data {
        let cutoff = now.addingTimeInterval(-Self.window)
        let recent = points.withLock { $0 }.filter { $0.at >= cutoff }
        let object: [String: Any] = [
            "window_seconds": Self.window,
            "points": recent.map { ["at": $0.at.timeIntervalSince1970, "token": $0.token, "latency_ms": $0.latency * 1000] as [String: Any] },
        ]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(#"{"points":[]}"#.utf8)
    }
}
