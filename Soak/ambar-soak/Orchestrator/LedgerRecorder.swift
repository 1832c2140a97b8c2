import AmbarStack
import Foundation

/// Follows the ledger during the run, on its own thread, as a consumer with a cursor (so purges
/// never pass it), and keeps what the checks need of every transaction — once retention purges
/// the ledger, the store alone no longer holds the run's history. Once a second it also samples
/// the ledger's size and the store file's, to show that both level off.
final class LedgerRecorder: @unchecked Sendable {
    /// What the checks need of one ledger transaction.
    struct Entry {
        let processID: Int32
        let instance: UInt64
        let isEmpty: Bool
        let committed: Int64
    }

    /// The ledger's row count and the store's size (file and WAL) at one moment.
    struct Sample {
        let at: Int64
        let rows: Int
        let bytes: Int
    }

    static let consumer = "soak-recorder"
    private let coordinator: PersistentStoreCoordinator
    private let storeURL: URL
    private let lock = NSLock()
    private var entries: [Int64: Entry] = [:]
    private var cursor: Int64 = 0
    private var samples: [Sample] = []
    private var failures: [String] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    init(root: URL) throws {
        storeURL = SoakModel.storeURL(in: root)
        coordinator = try PersistentStoreCoordinator(model: try SoakModel.model(), store: .sqlite(storeURL))
    }

    /// Starts following from the beginning of the ledger.
    func start() throws {
        try coordinator.setHistoryCursor(consumer: Self.consumer, token: 0)
        Thread.detachNewThread { [self] in
            var nextSample = Date()
            while !locked({ stopping }) {
                follow()
                if Date() >= nextSample {
                    sample()
                    nextSample = Date().addingTimeInterval(1)
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
            follow()
            sample()
            finished.signal()
        }
    }

    /// Stops following after reading the ledger once more; returns what was recorded.
    func stop() -> (entries: [Int64: Entry], samples: [Sample], failures: [String]) {
        locked { stopping = true }
        finished.wait()
        try? coordinator.removeHistoryCursor(consumer: Self.consumer)
        return locked { (entries, samples, failures) }
    }

    private func follow() {
        while true {
            let after = locked { cursor }
            let page: [HistoryTransaction]
            do {
                page = try coordinator.history(after: after, limit: 2000)
            } catch {
                // Busy (a frozen process holds the write lock) is retried at the next round;
                // expired history would make the checks blind: recorded as a problem.
                if case .historyExpired = error { locked { failures.append("the recorder's history was purged: \(error)") } }
                return
            }
            guard let last = page.last else { break }
            locked {
                for transaction in page {
                    entries[transaction.token] = Entry(
                        processID: transaction.processID, instance: transaction.instanceID ?? 0, isEmpty: transaction.isEmpty,
                        committed: Int64(transaction.timestamp.timeIntervalSince1970 * 1e9))
                }
                cursor = last.token
            }
            if page.count < 2000 { break }
        }
        try? coordinator.setHistoryCursor(consumer: Self.consumer, token: locked { cursor })
    }

    private func sample() {
        guard let summary = try? coordinator.historySummary() else { return }
        func size(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue ?? 0 }
        let bytes = size(storeURL.path) + size(storeURL.path + "-wal")
        locked { samples.append(Sample(at: EventLog.now(), rows: summary.transactions, bytes: bytes)) }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
