import Foundation

/// The soak's summary, on standard output.
struct SoakSummary {
    let report: SoakVerification.Report
    let timeline: ChaosTimeline
    let slots: [WorkerSlot]
    let processes: Int
    let seconds: Int
    let killEvery: Double
    let freezeEvery: Double
    let freezeFor: Double
    let keys: Int
    let profile: Profile

    func print(root: URL) {
        let r = report
        let failOverTimes = timeline.failOvers.compactMap { f in f.to.map { Double($0 - f.from) / 1e9 } }
        let roles = slots.map { "\($0.name) \($0.role.rawValue)\($0.isSentinel ? " (sentinel)" : "")" }.joined(separator: ", ")
        let failures = r.failures.isEmpty ? "none" : r.failures.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        var lines = [
            "ambar-soak: \(processes) processes (\(roles)); \(keys) keys; a kill every \(format(killEvery)) s, a \(format(freezeFor)) s freeze every \(format(freezeEvery)) s",
            row("duration", "\(seconds) s of load and chaos"),
            row(
                "saves",
                "\(r.transactions) transactions ("
                    + WorkerRole.allCases.compactMap { role in r.transactionsByRole[role].map { "\(role.rawValue)s \($0)" } }.joined(separator: ", ")
                    + "); failed saves: \(failures)"),
            row("kills", "\(timeline.kills.count) (\(timeline.kills.filter(\.wasHub).count) of the hub's process); \(r.lives) process lives in all"),
            row(
                "fail-overs",
                "\(timeline.failOvers.count); max fail-over time \(failOverTimes.max().map { format($0, digits: 3) + " s" } ?? "-")"
                    + ", median \(median(failOverTimes).map { format($0, digits: 3) + " s" } ?? "-")"
                    + (failOverTimes.count < timeline.failOvers.count ? "; \(timeline.failOvers.count - failOverTimes.count) NEVER RECOVERED" : "")),
            row("freezes", "\(timeline.freezes.count) (\(timeline.freezes.filter(\.wasHub).count) of the hub's process)"),
            row("crashes", timeline.crashes.isEmpty ? "none" : timeline.crashes.map { "\($0.slot)#\($0.pid) status \($0.status)" }.joined(separator: ", ")),
            row(
                "exactly once",
                "\(yes(r.exactlyOnce)): \(r.mergesChecked) merges checked; \(r.missing) missing, \(r.duplicated) duplicated, \(r.unexpected) unexpected, \(r.expired) history-expired, \(r.phantoms) not as the ledger holds them"
            ),
            row("max merge latency", latency(r.normal, "no fault in the way")),
            row("", latency(r.duringFault, "a freeze, a kill or a fail-over in the way")),
            row("", latency(r.afterRestart, "caught up after a (re)start")),
            row(
                "memory",
                r.memory.isEmpty
                    ? "no life lasted half the run"
                    : "\(yes(r.memoryBounded)) bounded; " + r.memory.map { "\($0.life) \(mb($0.early)) → \(mb($0.late))" }.joined(separator: ", ")),
            row("integrity_check", r.integrity.isEmpty ? "ok" : r.integrity.prefix(3).joined(separator: "; ")),
            row(
                "digests",
                "\(r.digests.filter { $0.text == r.storeDigest.description }.count) of \(r.digests.count) live processes agree with a fresh reader (\(r.storeDigest.count) rows, head token \(r.head))"
            ),
        ]
        if let retention = profile.historyRetention {
            lines.append(row("retention", "\(format(retention)) s of history, a \(format(profile.consumerLease ?? 86_400)) s consumer lease"))
        }
        if let levels = r.levels {
            lines.append(
                row(
                    "ledger rows",
                    "\(levels.rows.map(String.init).joined(separator: " → ")) (medians of the first, middle and last third; peaks \(levels.peakRows.map(String.init).joined(separator: " → "))); levelled off: \(yes(r.levelledOff))"
                ))
            lines.append(
                row(
                    "store size",
                    levels.bytes.map(mb).joined(separator: " → ") + " (file and WAL; peaks " + levels.peakBytes.map(mb).joined(separator: " → ") + ")"))
        }
        if let sent = r.forgedSent {
            lines.append(
                row(
                    "hostile peer",
                    "\(sent) forged, replayed and far-ahead frames sent; \(r.rejectedMessages) disagreements with the ledger counted by the processes at their digest"
                ))
        }
        if profile.hubFreezeEvery > 0 {
            lines.append(
                row(
                    "hub freezes",
                    "\(format(profile.hubFreezeFor)) s every \(format(profile.hubFreezeEvery)) s (past the 2 s welcome and 5 s handshake deadlines)"))
        }
        if profile.pidNamespaces || profile.pidNamespacesUnavailable {
            let namespaced = slots.filter(\.inPIDNamespace).map(\.name)
            lines.append(
                row(
                    "PID namespaces",
                    profile.pidNamespacesUnavailable
                        ? "not available here: every worker in this one" : "\(namespaced.joined(separator: ", ")) each in one of its own"))
        }
        if let skewed = r.skewedClock {
            lines.append(
                row(
                    "skewed clock",
                    "a writer \(SkewedClockWriter.skew) (faketime): \(skewed.imports) imports (\(skewed.refusedWhileLocked) refused while another client held the write lock), \(skewed.killedWatchers) watchers SIGKILLed with their positions left behind; ledger levelled off: \(yes(r.levelledOff))"
                ))
        }
        if let probes = r.descriptorProbes {
            let counts = probes.isEmpty ? "none ended yet" : probes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            lines.append(
                row(
                    "descriptor limit",
                    "sync-agent watch under \(DescriptorLimitProbe.limits.lowerBound) to \(DescriptorLimitProbe.limits.upperBound) open files: \(counts); killed by a signal: \(r.problems.contains { $0.contains("killed by signal") } ? "yes" : "never")"
                ))
        }
        if let restore = r.restore { lines.append(row("restore", restore)) }
        if let inbox = r.inbox {
            lines.append(row("inbox", "\(inbox.dropped) files dropped (\(inbox.lockHolds) while the write lock was held), \(inbox.processed) imported"))
        }
        for (life, text) in r.digests where text != r.storeDigest.description { lines.append(row("", "\(life): \(text), the store: \(r.storeDigest)")) }
        for problem in r.problems + r.unclean { lines.append(row("problem", problem)) }
        lines.append("converged: \(yes(r.converged))")
        if !r.converged { lines.append("(the run's directory is kept: \(root.path))") }
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    private func row(_ label: String, _ text: String) -> String {
        label.padding(toLength: 18, withPad: " ", startingAt: 0) + text
    }

    private func latency(_ values: [Int64], _ what: String) -> String {
        guard !values.isEmpty else { return "\(what): none" }
        let sorted = values.sorted()
        let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        return "\(ms(sorted.last ?? 0)) (p50 \(ms(sorted[sorted.count / 2])), p99 \(ms(p99)); \(values.count) merges), \(what)"
    }

    private func ms(_ ns: Int64) -> String { format(Double(ns) / 1e6, digits: Double(ns) < 1e7 ? 2 : 0) + " ms" }
    private func mb(_ bytes: Int) -> String { format(Double(bytes) / 1_048_576, digits: 1) + " MB" }
    private func yes(_ flag: Bool) -> String { flag ? "yes" : "no" }

    private func median(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.sorted()[values.count / 2]
    }

    private func format(_ value: Double, digits: Int = 1) -> String {
        let scale = pow(10, Double(digits))
        let rounded = (value * scale).rounded() / scale
        return digits == 0 ? String(Int(rounded)) : String(rounded)
    }
}
