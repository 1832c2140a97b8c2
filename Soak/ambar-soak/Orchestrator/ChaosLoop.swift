import Foundation

/// Runs the soak processes and the chaos: kills (every third one the hub's process), restarts,
/// freezes; measures each hub fail-over from outside (until the socket answers again).
struct ChaosLoop {
    /// How the run ended: the head every process had to merge through.
    struct Ending {
        let head: Int64
        let started: Int64
        let stopped: Int64
    }

    let slots: [WorkerSlot]
    let root: URL
    let probe: HubProbe
    let killEvery: TimeInterval
    let freezeEvery: TimeInterval
    let freezeFor: TimeInterval
    /// Long freezes of the hub's process (past the handshake deadlines); 0: none.
    var hubFreezeEvery: TimeInterval = 0
    var hubFreezeFor: TimeInterval = 0
    /// Files for a `sync-agent run` agent, some dropped while the write lock is held.
    var inbox: InboxDriver?
    /// `sync-agent watch` processes under a low descriptor limit.
    var descriptorProbe: DescriptorLimitProbe?
    /// A writer whose clock is a year ahead.
    var skewedWriter: SkewedClockWriter?
    /// A backup taken half-way, restored after the checks.
    var restoreDrill: RestoreDrill?
    private(set) var timeline = ChaosTimeline()
    private var started: Int64 = 0
    private var stopped: Int64 = 0

    init(slots: [WorkerSlot], root: URL, probe: HubProbe, killEvery: TimeInterval, freezeEvery: TimeInterval, freezeFor: TimeInterval) {
        self.slots = slots
        self.root = root
        self.probe = probe
        self.killEvery = killEvery
        self.freezeEvery = freezeEvery
        self.freezeFor = freezeFor
    }

    private var events: URL { root.appendingPathComponent("events") }

    /// Starts every process and waits until each shares the store.
    mutating func startAll() throws {
        for slot in slots { try slot.start(eventsDirectory: events) }
        for slot in slots { try waitUntilSharing(slot) }
        started = EventLog.now()
    }

    /// The load and the chaos, for `seconds`.
    mutating func run(seconds: TimeInterval) {
        let end = Date().addingTimeInterval(seconds)
        var nextKill = Date().addingTimeInterval(killEvery)
        var nextFreeze = Date().addingTimeInterval(freezeEvery / 2)
        var nextHubFreeze = hubFreezeEvery > 0 ? Date().addingTimeInterval(hubFreezeEvery) : Date.distantFuture
        var thawAt: Date?
        var frozen: (slot: WorkerSlot, wasHub: Bool)?
        var nextSample = Date()
        var kills = 0
        let backupAt = Date().addingTimeInterval(seconds / 2)
        var backedUp = false
        while Date() < end {
            Thread.sleep(forTimeInterval: 0.02)
            restartCrashed()
            if Date() >= nextSample {
                slots.forEach { $0.sampleMemory() }
                nextSample = Date().addingTimeInterval(1)
            }
            if let until = thawAt, Date() >= until, let current = frozen, let pid = current.slot.pid, let interval = current.slot.thaw() {
                timeline.freezes.append(.init(slot: current.slot.name, pid: pid, from: interval.0, to: interval.1, wasHub: current.wasHub))
                frozen = nil
                thawAt = nil
            }
            if Date() >= nextHubFreeze, frozen == nil, let holder = probe.holder(), let slot = slots.first(where: { $0.pid == holder }) {
                // The hub's process, frozen past every handshake deadline: the others must give
                // up on it, follow the ledger and carry on.
                frozen = (slot, true)
                slot.freeze()
                thawAt = Date().addingTimeInterval(hubFreezeFor)
                nextHubFreeze = Date().addingTimeInterval(hubFreezeEvery)
            }
            if Date() >= nextFreeze, frozen == nil, let slot = slots.randomElement(), let pid = slot.pid {
                frozen = (slot, probe.holder() == pid)
                slot.freeze()
                thawAt = Date().addingTimeInterval(freezeFor)
                nextFreeze = Date().addingTimeInterval(freezeEvery)
            }
            inbox?.tick()
            descriptorProbe?.tick()
            skewedWriter?.tick()
            if !backedUp, let drill = restoreDrill, Date() >= backupAt {
                drill.takeBackup()  // online, while the chaos goes on around it
                backedUp = true
            }
            if Date() >= nextKill {
                kills += 1
                kill(preferringHub: kills % 3 == 0, sparing: frozen?.slot)
                nextKill = Date().addingTimeInterval(killEvery)
            }
        }
        if let frozen, let pid = frozen.slot.pid, let interval = frozen.slot.thaw() {
            timeline.freezes.append(.init(slot: frozen.slot.name, pid: pid, from: interval.0, to: interval.1, wasHub: frozen.wasHub))
        }
    }

    /// Stops the load, waits for the writers to say so, names the head and waits for every
    /// process's digest at it; then SIGTERMs everyone.
    mutating func finish() throws -> Ending {
        stopped = EventLog.now()
        try Data().write(to: root.appendingPathComponent("control/stop-load"))
        try waitForEvents("the writers to stop", timeout: 60) { slot, file in slot.role == .watcher || file.stopped != nil }
        let head = try SoakVerification.head(in: root)
        let staging = root.appendingPathComponent("control/.digest-at")
        try Data("\(head)\n".utf8).write(to: staging)
        guard rename(staging.path, root.appendingPathComponent("control/digest-at").path) == 0 else {
            throw SoakFailure("could not write \(root.path)/control/digest-at (errno \(errno))")
        }
        try waitForEvents("every process's digest", timeout: 120) { _, file in file.digest != nil }
        stopAll()
        return Ending(head: head, started: started, stopped: stopped)
    }

    /// Adds the times another client held the write lock to the timeline.
    mutating func recordLockHolds(_ intervals: [(from: Int64, to: Int64)]) {
        timeline.lockHolds += intervals
    }

    /// SIGTERM to every running process (the others were reaped already).
    func stopAll() {
        for slot in slots where slot.pid != nil {
            if slot.terminate(timeout: 20) == nil { FileHandle.standardError.write(Data("\(slot.name) ignored SIGTERM for 20 s; killed\n".utf8)) }
        }
    }

    private mutating func kill(preferringHub: Bool, sparing frozen: WorkerSlot?) {
        let hubPID = probe.holder()
        let candidates = slots.filter { !$0.isSentinel && $0 !== frozen && $0.pid != nil }
        let hubSlot = candidates.first { $0.pid == hubPID }
        guard let victim = (preferringHub ? hubSlot : nil) ?? candidates.randomElement(), let pid = victim.pid else { return }
        let wasHub = pid == hubPID
        victim.kill()
        let at = EventLog.now()
        timeline.kills.append(.init(slot: victim.name, pid: pid, at: at, wasHub: wasHub))
        restart(victim)
        if wasHub { timeline.failOvers.append(.init(from: at, to: waitForNewHub(replacing: pid))) }
    }

    /// Polls the socket until a hub other than `old` answers; nil after 30 s.
    private func waitForNewHub(replacing old: pid_t) -> Int64? {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let holder = probe.holder(), holder != old, probe.answers() { return EventLog.now() }
            usleep(1_000)
        }
        return nil
    }

    private mutating func restartCrashed() {
        for slot in slots {
            guard let pid = slot.pid, let status = slot.reapIfEnded() else { continue }
            timeline.crashes.append((slot.name, pid, status))
            FileHandle.standardError.write(Data("\(slot.name) (pid \(pid)) ended on its own (wait status \(status)); see logs/\(slot.name).log\n".utf8))
            restart(slot)
        }
    }

    private mutating func restart(_ slot: WorkerSlot) {
        do {
            try slot.start(eventsDirectory: events)
        } catch {
            timeline.failedRestarts.append("could not restart \(slot.name): \(error)")
            FileHandle.standardError.write(Data("could not restart \(slot.name): \(error)\n".utf8))
        }
    }

    private func waitUntilSharing(_ slot: WorkerSlot) throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let life = slot.current, EventFile(path: life.eventsPath).start != nil { return }
            if slot.reapIfEnded() != nil { throw SoakFailure("\(slot.name) exited at start; see \(root.path)/logs/\(slot.name).log") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw SoakFailure("\(slot.name) did not start sharing within 60 s; see \(root.path)/logs/\(slot.name).log")
    }

    private func waitForEvents(_ what: String, timeout: TimeInterval, until done: (WorkerSlot, EventFile) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            for slot in slots {
                if let pid = slot.pid, let status = slot.reapIfEnded() {
                    throw SoakFailure(
                        "\(slot.name) (pid \(pid)) ended on its own (wait status \(status)) while waiting for \(what); see \(root.path)/logs/\(slot.name).log")
                }
            }
            let pending = slots.filter { slot in slot.current.map { !done(slot, EventFile(path: $0.eventsPath)) } ?? false }
            if pending.isEmpty { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw SoakFailure("timed out after \(Int(timeout)) s waiting for \(what); see \(root.path)/logs/")
    }
}

/// Why the soak could not run to its checks.
struct SoakFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
