import AmbarStack
import Foundation
import GRDBSQLite
import SharedStoreIPC

/// Workload 6: a commit in this process until it is merged in the main context of other
/// processes, with 1 and 8 receivers; against a Unix-socket notification followed by a SELECT of
/// the changed row, in the same run.
struct CrossProcess {
    let saves: Int
    let receiverCounts: [Int]
    let objects = 100
    /// Latencies (ns) of the largest receiver count, for the histogram.
    private(set) var histogram: (ambar: [Int64], raw: [Int64]) = ([], [])

    mutating func run(into report: inout Report) async throws {
        var figures: [Figure] = []
        var met = true
        for receivers in receiverCounts {
            progress("cross-process: \(receivers) AmbarStack receiver(s), \(saves) saves")
            let ambar = try await ambarLatencies(receivers: receivers)
            progress("cross-process: \(receivers) raw receiver(s), \(saves) saves")
            let raw = try rawLatencies(receivers: receivers)
            if receivers == receiverCounts.last { histogram = (ambar, raw) }
            let a = (percentile(ambar, 0.5) / 1000, percentile(ambar, 0.99) / 1000, percentile(ambar, 0.999) / 1000)
            let r = (percentile(raw, 0.5) / 1000, percentile(raw, 0.99) / 1000, percentile(raw, 0.999) / 1000)
            figures += [
                Figure(approach: "AmbarStack, \(receivers) receiver(s): p50", value: a.0, unit: "µs", ratio: a.0 / r.0, ratioAgainst: "raw p50"),
                Figure(approach: "AmbarStack, \(receivers) receiver(s): p99", value: a.1, unit: "µs", ratio: a.1 / r.1, ratioAgainst: "raw p99"),
                Figure(approach: "AmbarStack, \(receivers) receiver(s): p99.9", value: a.2, unit: "µs", ratio: a.2 / r.2, ratioAgainst: "raw p99.9"),
                Figure(approach: "raw socket notify + SELECT, \(receivers) receiver(s): p50", value: r.0, unit: "µs"),
                Figure(approach: "raw socket notify + SELECT, \(receivers) receiver(s): p99", value: r.1, unit: "µs"),
                Figure(approach: "raw socket notify + SELECT, \(receivers) receiver(s): p99.9", value: r.2, unit: "µs"),
            ]
            // The bounds against the socket limit measured in this run: p50 within 2× raw with
            // one receiver (2.5× with more), p99 within 2.5× (3× with more).
            met = met && a.0 <= (receivers == 1 ? 2 : 2.5) * r.0 && a.1 <= (receivers == 1 ? 2.5 : 3) * r.1
        }
        report.results.append(
            WorkloadResult(
                number: 6, title: "Cross-process",
                figures: figures,
                target: "p50 ≤ 2× raw, p99 ≤ 2.5× (with \(receiverCounts.last ?? 8) receivers: p50 ≤ 2.5×, p99 ≤ 3×)", met: met,
                note:
                    "from the publisher's CLOCK_MONOTONIC just before its save to the object refreshed in each receiver's main context (all latencies of all receivers pooled); \(saves) saves, 2 ms apart. The baseline publisher commits through the raw C API and writes the row id to each receiver's socket; each receiver reads it and SELECTs the row"
            ))
    }

    private func ambarLatencies(receivers: Int) async throws -> [Int64] {
        let scratch = try ScratchDirectory("xproc")
        defer { scratch.remove() }
        let stack = try DataStack.open(model: .model(try CrossProcessRoles.model()), storeURL: scratch.file("bench.sqlite"), name: "bench")
        let importer = try stack.importerContext()
        try importer.performAndWait { () throws(AmbarError) in
            _ = try importer.batchInsert(entityName: "Stamp", rows: (0..<objects).map { ["uid": .string("s\($0)")] })
        }
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(scratch.url))
        while !sync.isConnected { try await Task.sleep(nanoseconds: 10_000_000) }
        let children = try (0..<receivers).map { _ in try ChildProcess(role: "receiver", [scratch.url.path]) }
        for child in children { _ = child.line() }
        try await Task.sleep(nanoseconds: 300_000_000)
        let all = try await publishStamps(importer: importer, to: children, saves: saves)
        await sync.stop()  // before the directory goes: nothing may recreate the store in it
        return all
    }

    private func rawLatencies(receivers: Int) throws -> [Int64] {
        let scratch = try ScratchDirectory("raw")
        defer { scratch.remove() }
        let store = scratch.file("raw.sqlite").path
        let socketPath = scratch.file("notify.sock").path
        let db = try RawDatabase(path: store)
        try db.exec("CREATE TABLE stamp (id INTEGER PRIMARY KEY, stamp INTEGER NOT NULL)")
        try db.exec("WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < \(objects)) INSERT INTO stamp (id, stamp) SELECT id, 0 FROM n")
        let listener = PosixSocket.listen(socketPath)
        defer { close(listener) }
        let children = try (0..<receivers).map { _ in try ChildProcess(role: "raw-receiver", [store, socketPath]) }
        let connections = children.map { _ in accept(listener, nil, nil) }
        defer { connections.forEach { close($0) } }
        for child in children { _ = child.line() }
        let update = try db.prepare("UPDATE stamp SET stamp = ? WHERE id = ?")
        defer { sqlite3_finalize(update) }
        func save(_ n: Int) throws {
            let id = Int64(n % objects + 1)
            sqlite3_bind_int64(update, 1, now())
            sqlite3_bind_int64(update, 2, id)
            try db.step(update)
            var message = id
            withUnsafeBytes(of: &message) { bytes in connections.forEach { PosixSocket.writeFully($0, bytes) } }
        }
        for n in 0..<min(50, saves) {
            try save(n)
            usleep(2_000)
        }
        usleep(100_000)
        for child in children { _ = child.ask("reset") }
        for n in 0..<saves {
            try save(n)
            usleep(2_000)
        }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !children.allSatisfy({ Int($0.ask("count")) ?? 0 >= saves }) { usleep(10_000) }
        var all: [Int64] = []
        for child in children { all += child.ask("report").split(separator: " ").compactMap { Int64($0) } }
        for child in children { _ = child.ask("quit") }
        return all.sorted()
    }
}

/// Stamps the objects one save at a time (2 ms apart, after 50 warm-up saves) through
/// `importer` while `children` record, for each, the time until it was merged in their main
/// context; returns every latency (ns), sorted, and ends the children.
func publishStamps(importer: ManagedObjectContext, to children: [ChildProcess], saves: Int) async throws -> [Int64] {
    let items: [ManagedObject] = try importer.performAndWait { () throws in
        try importer.fetch(FetchRequest<ManagedObject>(entityName: "Stamp", sortDescriptors: [Key<String>("uid").sorted()]))
    }
    func save(_ n: Int) throws {
        try importer.performAndWait { () throws(AmbarError) in
            try items[n % items.count].setValue(.integer(now()), forKey: "stamp")
            try importer.save()
        }
    }
    for n in 0..<min(50, saves) {
        try save(n)
        usleep(2_000)
    }  // warm-up
    try await waitFor(children, atLeast: min(50, saves))
    for child in children { _ = child.ask("reset") }
    for n in 0..<saves {
        try save(n)
        usleep(2_000)
    }
    try await waitFor(children, atLeast: saves)
    var all: [Int64] = []
    for child in children { all += child.ask("report").split(separator: " ").compactMap { Int64($0) } }
    for child in children {
        _ = child.ask("quit")
        child.process.waitUntilExit()
    }
    return all.sorted()
}

/// Waits until every child answers `command` (`count`: events recorded; `through`: highest
/// token known) with at least `expected`; throws after 60 s.
func waitFor(_ children: [ChildProcess], atLeast expected: Int, asking command: String = "count") async throws {
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
        if children.allSatisfy({ Int($0.ask(command)) ?? 0 >= expected }) { return }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
    // A figure computed after a silent timeout would be a wrong figure, not a slow one.
    let answers = children.map { $0.ask(command) }.joined(separator: ", ")
    throw BenchError("the receivers did not reach \(expected) within 60 s (\(command): \(answers))")
}
