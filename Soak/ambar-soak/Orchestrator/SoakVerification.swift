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
        /// Merges reported for a token whose ledger transaction is another process's than the
        /// event said, or that the ledger never held: an observer saw what the ledger does not hold.
        var phantoms = 0
        var exactlyOnce: Bool { missing == 0 && duplicated == 0 && unexpected == 0 && expired == 0 && phantoms == 0 }
        /// Hub messages that disagreed with the ledger, as the processes counted them.
        var rejectedMessages = 0
        /// The ledger's rows and the store's bytes at the start, middle and end of the run, and
        /// whether both levelled off (checked when the run purges).
        var levels: (rows: [Int], bytes: [Int], peakRows: [Int], peakBytes: [Int])?
        var levelledOff = true
        /// Inbox files dropped (some while the write lock was held) and imported.
        var inbox: (dropped: Int, lockHolds: Int, processed: Int)?
        /// Frames the hostile peer sent.
        var forgedSent: Int?
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
        /// What the `watch` processes under a low descriptor limit did, by outcome.
        var descriptorProbes: [String: Int]?
        /// What the restore drill found.
        var restore: String?
        /// How many imports and killed watchers ran with the clock a year ahead.
        var skewedClock: (imports: Int, killedWatchers: Int, refusedWhileLocked: Int)?

        var converged: Bool {
            digestsAgree && integrity.isEmpty && exactlyOnce && memoryBounded && levelledOff && crashes == 0 && unclean.isEmpty && problems.isEmpty
        }
    }

    let root: URL
    let slots: [WorkerSlot]
    let timeline: ChaosTimeline
    let ending: ChaosLoop.Ending
    /// What the recorder kept of the ledger during the run (purges remove it from the store).
    let recorded: [Int64: LedgerRecorder.Entry]
    /// The recorder's samples of the ledger's and the store's size.
    let samples: [LedgerRecorder.Sample]
    /// Whether retention purged the ledger during the run (then both must level off).
    let purging: Bool

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
        // The ledger as the recorder kept it (retention purges the store's), plus what it did
        // not read yet.
        var ledger = recorded
        var after = recorded.keys.max() ?? 0
        while true {
            let page = try coordinator.history(after: after, limit: 5000)
            for transaction in page {
                ledger[transaction.token] = LedgerRecorder.Entry(
                    processID: transaction.processID, instance: transaction.instanceID ?? 0, isEmpty: transaction.isEmpty,
                    committed: Int64(transaction.timestamp.timeIntervalSince1970 * 1e9))
            }
            guard let last = page.last, page.count == 5000 else { break }
            after = last.token
        }

        let lives = slots.flatMap(\.incarnations)
        var roleOfInstance: [UInt64: WorkerRole] = [:]
        var pidOfInstance: [UInt64: Int32] = [:]
        for life in lives {
            guard let instance = EventFile(path: life.eventsPath).instance else { continue }
            roleOfInstance[instance] = slots.first { $0.name == life.slot }?.role ?? .watcher
            pidOfInstance[instance] = life.pid
        }
        for transaction in ledger.values where !transaction.isEmpty {
            guard let role = roleOfInstance[transaction.instance] else { continue }  // the seed, the inbox agent
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
            report.rejectedMessages += file.rejected
            checkMerges(of: life, file: file, start: start, ledger: ledger, pidOfInstance: pidOfInstance, into: &report)
        }
        if purging { checkLevels(into: &report) }
        report.digestsAgree = !report.digests.isEmpty && report.digests.allSatisfy { $0.text == report.storeDigest.description }
        checkMemory(lives, into: &report)
        return report
    }

    /// Exactly once: every other process's non-empty transaction after the life's start (through
    /// the head, for lives that lasted to the end; through its last merge, for killed ones) was
    /// merged once, and nothing else was.
    private func checkMerges(
        of life: Incarnation, file: EventFile, start: (token: Int64, at: Int64), ledger: [Int64: LedgerRecorder.Entry],
        pidOfInstance: [UInt64: Int32], into report: inout Report
    ) {
        let seen = file.merges.filter { $0.token > start.token }
        let lastSeen = seen.map(\.token).max() ?? start.token
        let bound = life.end == .terminated(0) ? max(ending.head, lastSeen) : lastSeen
        var counts: [Int64: Int] = [:]
        for merge in seen { counts[merge.token, default: 0] += 1 }
        report.duplicated += counts.values.filter { $0 > 1 }.reduce(0) { $0 + $1 - 1 }
        if start.token < bound {
            for token in (start.token + 1)...bound {
                guard let transaction = ledger[token] else { continue }
                // Its own transactions are told by instance (PIDs repeat across PID namespaces).
                let own = file.instance.map { transaction.instance == $0 } ?? (transaction.processID == life.pid)
                let expected = !own && !transaction.isEmpty
                if expected && counts[token] == nil { report.missing += 1 }
                if !expected && counts[token] != nil { report.unexpected += 1 }
            }
        }
        report.unexpected += counts.keys.filter { ledger[$0] == nil }.count
        report.phantoms += seen.filter { merge in ledger[merge.token].map { $0.instance != merge.instance } ?? true }.count
        report.mergesChecked += seen.count
        var once = Set<Int64>()
        for merge in seen where once.insert(merge.token).inserted {
            guard let transaction = ledger[merge.token] else { continue }
            let committed = transaction.committed
            let latency = max(0, merge.at - committed)
            if committed < start.at {
                report.afterRestart.append(latency)
            } else if timeline.faultOverlaps(
                from: committed, to: merge.at, sender: pidOfInstance[transaction.instance] ?? transaction.processID, receiver: life.pid)
            {
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

    /// With retention purging all along, the ledger's row count and the store's size level off:
    /// the median of the last third of the run is at most half again the median of the middle
    /// third, plus 500 rows or 1 MiB. (Medians, because a frozen process holding a read snapshot
    /// makes the WAL grow for as long as it is frozen; the WAL is cut back once it restarts. The
    /// peaks are reported too.)
    private func checkLevels(into report: inout Report) {
        let run = samples.filter { $0.at >= ending.started && $0.at <= ending.stopped }
        guard run.count >= 9 else { return }
        let third = run.count / 3
        let parts = [run[..<third], run[third..<(2 * third)], run[(2 * third)...]]
        func median(_ part: ArraySlice<LedgerRecorder.Sample>, _ value: (LedgerRecorder.Sample) -> Int) -> Int {
            let sorted = part.map(value).sorted()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }
        func peak(_ part: ArraySlice<LedgerRecorder.Sample>, _ value: (LedgerRecorder.Sample) -> Int) -> Int { part.map(value).max() ?? 0 }
        report.levels = (
            rows: parts.map { median($0, \.rows) }, bytes: parts.map { median($0, \.bytes) },
            peakRows: parts.map { peak($0, \.rows) }, peakBytes: parts.map { peak($0, \.bytes) }
        )
        let rowsOK = Double(median(parts[2], \.rows)) <= Double(median(parts[1], \.rows)) * 1.5 + 500
        let bytesOK = Double(median(parts[2], \.bytes)) <= Double(median(parts[1], \.bytes)) * 1.5 + 1_048_576
        report.levelledOff = rowsOK && bytesOK
    }
}
