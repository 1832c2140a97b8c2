import AmbarStack
import Foundation

/// The soak's checks, made after every process stopped: digests against a fresh reader,
/// `integrity_check`, exactly-once merges per process life, memory, crashes.
struct SoakVerification {
    /// What the checks found.
    struct Report {
        var head: Int64 = 0
        var transactions = 0
        var transactionsByRole: [WorkerRole: Int] = [:]
        var failures: [String: Int] = [:]
        var storeDigest = RowDigest()
        var digests: [(life: String, text: String)] = []
        var digestsAgree = false
        var integrity: [String] = []
        var lives = 0
        var mergesChecked = 0
        var missing = 0
        var duplicated = 0
        var unexpected = 0
        var expired = 0
        var exactlyOnce: Bool { missing == 0 && duplicated == 0 && unexpected == 0 && expired == 0 }
        /// Merge latencies in ns: no fault in the window; a fault in the window; a catch-up after a
        /// process (re)started.
        var normal: [Int64] = []
        var duringFault: [Int64] = []
        var afterRestart: [Int64] = []
        /// Per long life: (name, early RSS, late RSS).
        var memory: [(life: String, early: Int, late: Int)] = []
        var memoryBounded = true
        var crashes = 0
        var unclean: [String] = []
        var problems: [String] = []

        var converged: Bool {
            digestsAgree && integrity.isEmpty && exactlyOnce && memoryBounded && crashes == 0 && unclean.isEmpty && problems.isEmpty
        }
    }

    let root: URL
    let slots: [WorkerSlot]
    let timeline: ChaosTimeline
    let ending: ChaosLoop.Ending

    /// The ledger's head, read by a fresh coordinator.
    static func head(in root: URL) throws -> Int64 {
        try PersistentStoreCoordinator(model: try SoakModel.model(), store: .sqlite(SoakModel.storeURL(in: root))).currentHistoryToken()
    }

    func verify() throws -> Report {
        var report = Report()
        report.head = ending.head
        let coordinator = try PersistentStoreCoordinator(model: try SoakModel.model(), store: .sqlite(SoakModel.storeURL(in: root)))
        report.integrity = try coordinator.integrityCheck()
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "soak.reader")
        report.storeDigest = try reader.performAndWait { () throws(AmbarError) -> RowDigest in
            var digest = RowDigest()
            var rows = ""
            for item in try reader.fetch(SoakModel.allItems()) { rows += try digest.add(item) + "\n" }
            try? rows.write(to: root.appendingPathComponent("events/store.rows"), atomically: true, encoding: .utf8)
            return digest
        }
        // The ledger, page by page, kept as the little each check needs.
        var ledger: [Int64: LedgerEntry] = [:]
        var after: Int64 = 0
        while true {
            let page = try coordinator.history(after: after, limit: 5000)
            for transaction in page {
                ledger[transaction.token] = LedgerEntry(
                    processID: transaction.processID, isEmpty: transaction.isEmpty,
                    committed: Int64(transaction.timestamp.timeIntervalSince1970 * 1e9))
            }
            guard let last = page.last, page.count == 5000 else { break }
            after = last.token
        }

        let lives = slots.flatMap(\.incarnations)
        let roleOfPID = Dictionary(lives.map { life in (life.pid, slots.first { $0.name == life.slot }?.role ?? .watcher) }, uniquingKeysWith: { a, _ in a })
        for transaction in ledger.values where !transaction.isEmpty {
            guard let role = roleOfPID[transaction.processID] else { continue }  // the seed
            report.transactions += 1
            report.transactionsByRole[role, default: 0] += 1
        }
        report.crashes = timeline.crashes.count
        report.problems += timeline.failedRestarts
        report.lives = lives.count

        for life in lives {
            let file = EventFile(path: life.eventsPath)
            let name = "\(life.slot)#\(life.pid)"
            file.failures.forEach { report.failures[$0.key, default: 0] += $0.value }
            report.expired += file.expired.count
            if case .terminated(let status) = life.end, status != 0 { report.unclean.append("\(name) exited with wait status \(status)") }
            if case .running = life.end { report.unclean.append("\(name) was still running") }
            if life.end == .terminated(0) {
                guard let digest = file.digest else {
                    report.problems.append("\(name) reported no digest")
                    continue
                }
                report.digests.append((name, digest.text))
            }
            guard let start = file.start else {
                if life.end != .killed { report.problems.append("\(name) never started sharing") }
                continue
            }
            checkMerges(of: life, file: file, start: start, ledger: ledger, into: &report)
        }
        report.digestsAgree = !report.digests.isEmpty && report.digests.allSatisfy { $0.text == report.storeDigest.description }
        checkMemory(lives, into: &report)
        return report
    }

    /// Exactly once: every other process's non-empty transaction after the life's start (through
    /// the head, for lives that lasted to the end; through its last merge, for killed ones) was
    /// merged once, and nothing else was.
    private func checkMerges(of life: Incarnation, file: EventFile, start: (token: Int64, at: Int64), ledger: [Int64: LedgerEntry], into report: inout Report) {
        let seen = file.merges.filter { $0.token > start.token }
        let lastSeen = seen.map(\.token).max() ?? start.token
        let bound = life.end == .terminated(0) ? max(ending.head, lastSeen) : lastSeen
        var counts: [Int64: Int] = [:]
        for merge in seen { counts[merge.token, default: 0] += 1 }
        report.duplicated += counts.values.filter { $0 > 1 }.reduce(0) { $0 + $1 - 1 }
        if start.token < bound {
            for token in (start.token + 1)...bound {
                guard let transaction = ledger[token] else { continue }
                let expected = transaction.processID != life.pid && !transaction.isEmpty
                if expected && counts[token] == nil { report.missing += 1 }
                if !expected && counts[token] != nil { report.unexpected += 1 }
            }
        }
        report.unexpected += counts.keys.filter { ledger[$0] == nil }.count
        report.mergesChecked += seen.count
        var once = Set<Int64>()
        for merge in seen where once.insert(merge.token).inserted {
            guard let transaction = ledger[merge.token] else { continue }
            let committed = transaction.committed
            let latency = max(0, merge.at - committed)
            if committed < start.at {
                report.afterRestart.append(latency)
            } else if timeline.faultOverlaps(from: committed, to: merge.at, sender: transaction.processID, receiver: life.pid) {
                report.duringFault.append(latency)
            } else {
                report.normal.append(latency)
            }
        }
    }

    /// Lives that lasted at least half the run: the largest RSS in the last quarter of the life
    /// may exceed the largest in its second quarter by at most half, plus 16 MiB.
    private func checkMemory(_ lives: [Incarnation], into report: inout Report) {
        let run = ending.stopped - ending.started
        for life in lives {
            guard let ended = life.ended, ended - life.started >= run / 2, life.memory.count >= 8 else { continue }
            let span = ended - life.started
            let early = life.memory.filter { $0.0 - life.started >= span / 4 && $0.0 - life.started < span / 2 }.map(\.1).max() ?? 0
            let late = life.memory.filter { $0.0 - life.started >= span * 3 / 4 }.map(\.1).max() ?? 0
            guard early > 0, late > 0 else { continue }
            report.memory.append(("\(life.slot)#\(life.pid)", early, late))
            if Double(late) > Double(early) * 1.5 + 16 * 1_048_576 { report.memoryBounded = false }
        }
    }

    /// What the checks need of one ledger transaction.
    struct LedgerEntry {
        let processID: Int32
        let isEmpty: Bool
        let committed: Int64
    }
}
