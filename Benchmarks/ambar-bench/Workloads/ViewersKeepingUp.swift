import AmbarStack
import Foundation
import SharedStoreIPC

/// Workload 9: the demo's shape at benchmark size. This process imports, paced: 250-object
/// transactions at `pace` records/s, inserts for the first half of the run, then updates and
/// deletes of earlier rows; two viewer processes each keep a results controller over the whole
/// entity on their main context. Each changed object carries the importer's CLOCK_MONOTONIC
/// taken just before its save; a viewer records, for every merged transaction, the time from
/// that stamp until the merge (results controller included) finished on its main queue.
///
/// Reported: commit→merged p50/p99 at the target pace, the p50 lag of the transactions
/// committed in the first and in the last second, and the highest pace (doubling from the
/// target) at which the viewers still keep up: every transaction merged, the last second's p50
/// within 2× the first second's plus 5 ms.
struct ViewersKeepingUp {
    let pace: Int
    let seconds: Double
    let searchSeconds: Double
    /// The highest pace the search tries.
    let maximumPace: Int
    let batch = 250
    let viewers = 2

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Record",
                properties: [
                    .attribute("seq", .integer64, defaultValue: 0),
                    .attribute("title", .string),
                    .attribute("stamp", .integer64, defaultValue: 0),
                ], uniquenessConstraints: [["seq"]])
        ])
    }

    /// What one paced run gave.
    struct Run {
        let pace: Int
        /// The pace the importer achieved (it may fall short of the one asked).
        let achieved: Double
        let latencies: [Int64]
        let firstSecond: [Int64]
        let lastSecond: [Int64]
        let allMerged: Bool
        var p50: Double { percentile(latencies, 0.5) / 1e6 }
        var p99: Double { percentile(latencies, 0.99) / 1e6 }
        var firstP50: Double { percentile(firstSecond, 0.5) / 1e6 }
        var lastP50: Double { percentile(lastSecond, 0.5) / 1e6 }
        var keptUp: Bool { allMerged && achieved >= Double(pace) * 0.9 && lastP50 <= 2 * firstP50 + 5 }
    }

    func run(into report: inout Report) async throws {
        progress("viewers keeping up: \(viewers) viewers, \(pace) records/s for \(seconds) s")
        let target = try await paced(pace: pace, seconds: seconds)
        // Up from the target while the viewers keep up, or down from it until they do.
        var highest: Run? = target.keptUp ? target : nil
        if highest != nil {
            var next = pace * 2
            while highest?.pace == next / 2, next <= maximumPace {
                progress("viewers keeping up: trying \(next) records/s for \(searchSeconds) s")
                let trial = try await paced(pace: next, seconds: searchSeconds)
                if trial.keptUp { highest = trial } else { break }
                next *= 2
            }
        } else {
            var next = pace / 2
            while highest == nil, next >= pace / 16 {
                progress("viewers keeping up: trying \(next) records/s for \(searchSeconds) s")
                let trial = try await paced(pace: next, seconds: searchSeconds)
                if trial.keptUp { highest = trial }
                next /= 2
            }
        }
        let met = target.p50 <= 10 && target.p99 <= 50 && target.keptUp
        report.results.append(
            WorkloadResult(
                number: 9, title: "Viewers keeping up",
                figures: [
                    Figure(approach: "commit→merged p50 (2 viewers, \(pace) records/s)", value: target.p50, unit: "ms"),
                    Figure(approach: "commit→merged p99", value: target.p99, unit: "ms"),
                    Figure(approach: "lag (p50) of the first second's transactions", value: target.firstP50, unit: "ms"),
                    Figure(approach: "lag (p50) of the last second's transactions", value: target.lastP50, unit: "ms"),
                    Figure(approach: "pace the importer achieved", value: target.achieved, unit: "records/s"),
                    Figure(approach: "highest pace kept up (lag flat), doubling or halving", value: Double(highest?.pace ?? 0), unit: "records/s"),
                ],
                target: "at \(pace) records/s: p50 ≤ 10 ms, p99 ≤ 50 ms, lag flat", met: met,
                note:
                    "an importer saving \(batch)-object transactions paced at \(pace) records/s for \(Int(seconds)) s (inserts for the first half, then 200 updates and 50 deletes of earlier rows per transaction) while \(viewers) viewer processes each keep a results controller over the whole entity (sorted by seq) on their main context; latency from the importer's CLOCK_MONOTONIC before each save to the end of the merge on each viewer's main queue, all transactions of both viewers pooled. Lag flat: every transaction merged and the last second's p50 within 2× the first second's + 5 ms. Higher paces (doubling) run for \(searchSeconds) s each"
            ))
    }

    /// One paced run on a fresh store with fresh viewers.
    private func paced(pace: Int, seconds: Double) async throws -> Run {
        let scratch = try ScratchDirectory("viewers")
        defer { scratch.remove() }
        let stack = try DataStack.open(model: .model(try Self.model()), storeURL: scratch.file("bench.sqlite"), name: "bench")
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(scratch.url))
        while !sync.isConnected { try await Task.sleep(nanoseconds: 10_000_000) }
        let children = try (0..<viewers).map { _ in try ChildProcess(role: "viewer", [scratch.url.path]) }
        for child in children { _ = child.line() }

        let importer = try stack.importerContext()
        let transactions = max(2, Int(Double(pace) * seconds) / batch)
        let interval = Int64(Double(batch) / Double(pace) * 1e9)
        let result = try importer.performAndWait { () throws -> (started: Int64, ended: Int64, stamps: [Int64]) in
            var ids: [ManagedObjectID] = []
            var stamps: [Int64] = []
            var seq: Int64 = 0
            var changedUpTo = 0
            let started = now()
            for t in 0..<transactions {
                let due = started + Int64(t) * interval
                while now() < due { usleep(UInt32(max(1, (due - now()) / 1000))) }
                var stamped: [ManagedObject] = []
                let inserting = t < transactions / 2 || ids.count < batch
                if inserting {
                    for _ in 0..<batch {
                        let record = try importer.insertObject(entityName: "Record")
                        seq += 1
                        try record.setValue(.integer(seq), forKey: "seq")
                        try record.setValue(.string("Record \(seq)"), forKey: "title")
                        stamped.append(record)
                    }
                } else {
                    // 200 updates and 50 deletes of the earliest rows not changed yet.
                    let slice = ids[changedUpTo..<min(ids.count, changedUpTo + batch)]
                    changedUpTo += slice.count
                    for (n, id) in slice.enumerated() {
                        let record = try importer.existingObject(with: id)
                        if n < 200 {
                            try record.setValue(.string("Updated \(id.primaryKey ?? 0)"), forKey: "title")
                            stamped.append(record)
                        } else {
                            try importer.delete(record)
                        }
                    }
                }
                let stamp = now()
                for record in stamped { try record.setValue(.integer(stamp), forKey: "stamp") }
                try importer.save()
                stamps.append(stamp)
                if inserting { ids += stamped.map(\.objectID) }
                try importer.reset()
            }
            return (started, now(), stamps)
        }
        // Every transaction merged in every viewer (or 10 s more, then it did not keep up).
        let deadline = now() + 10_000_000_000
        var allMerged = false
        while now() < deadline {
            allMerged = children.allSatisfy { Int($0.ask("count")) ?? 0 >= result.stamps.count }
            if allMerged { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        var latencies: [Int64] = []
        var first: [Int64] = []
        var last: [Int64] = []
        for child in children {
            for pair in child.ask("report").split(separator: " ") {
                let parts = pair.split(separator: ":")
                guard parts.count == 2, let stamp = Int64(parts[0]), let latency = Int64(parts[1]) else { continue }
                latencies.append(latency)
                if stamp < result.started + 1_000_000_000 { first.append(latency) }
                if stamp >= result.ended - 1_000_000_000 { last.append(latency) }
            }
            _ = child.ask("quit")
        }
        await sync.stop()
        let achieved = Double(result.stamps.count * batch) / (Double(result.ended - result.started) / 1e9)
        return Run(pace: pace, achieved: achieved, latencies: latencies.sorted(), firstSecond: first.sorted(), lastSecond: last.sorted(), allMerged: allMerged)
    }

    /// A viewer process: its main context holds a results controller over every record; each
    /// merged transaction is recorded as `stamp:latency` (ns) once the merge, the controller's
    /// update included, is done on the main queue.
    static func viewer(directory: URL) throws -> Never {
        let stack = try DataStack.open(model: .model(try model()), storeURL: directory.appendingPathComponent("bench.sqlite"), name: "bench")
        let merged = Locked<[(stamp: Int64, latency: Int64)]>([])
        let transactions = Locked(0)
        let main = try stack.mainContext
        let holder = CrossProcessRoles.share(stack, through: directory) { event, t in
            transactions.withLock { $0 += 1 }
            // Any object the transaction inserted or updated carries its stamp.
            for id in event.inserted.union(event.updated) {
                if case .integer(let stamp)? = try? main.registeredObject(for: id)?.value(forKey: "stamp"), stamp > 0 {
                    merged.withLock { $0.append((stamp, t - stamp)) }
                    return
                }
            }
        }
        DispatchQueue.main.async {
            do {
                let controller = FetchedResultsController(
                    fetchRequest: FetchRequest<ManagedObject>(entityName: "Record", sortDescriptors: [Key<Int64>("seq").sorted()]), context: main)
                try controller.performFetch()
                controller.onChange = { _ in }
                holder.withLock { $0.append(controller) }
                say("ready")
            } catch {
                say("error \(error)")
                exit(1)
            }
        }
        Thread.detachNewThread {
            while let line = readLine() {
                switch line {
                case "count": say(String(transactions.withLock { $0 }))
                case "report": say(merged.withLock { $0.map { "\($0.stamp):\($0.latency)" }.joined(separator: " ") })
                default: exit(0)
                }
            }
            exit(0)
        }
        dispatchMain()
    }
}
