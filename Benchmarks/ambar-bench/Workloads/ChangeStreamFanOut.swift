import AmbarStack
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import SharedStoreIPC

/// Workload 12: `sync-agent serve`'s change streams under many clients. This process writes one
/// object per transaction at `rate` transactions/s into a store that `sync-agent serve` (a child
/// process) streams; its own NIO HTTP clients follow `/v1/changes` — half unfiltered, half
/// filtered on 10 distinct filters — and record when each transaction's `id:` arrives. The
/// latency of a transaction for a client is from just after its save returned in this process to
/// the arrival of its `id:` line there (CLOCK_MONOTONIC in one process).
///
/// Reported: p50 and p99 at each stream count, each as a ratio to the same clients following
/// ``RawFanOut`` (a bare NIO fan-out told each token, in a child process) at that count in this
/// run; serve's resident memory per idle stream (its RSS with `idleStreams` streams open and
/// nothing written, less its RSS before, over the streams); and the largest stream count again
/// with `nonReaders` more clients that send their request and never read.
struct ChangeStreamFanOut {
    let streamCounts: [Int]
    let rate: Int
    let seconds: Double
    let nonReaders: Int
    let filters = 10

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Reading",
                properties: [
                    .attribute("seq", .integer64, defaultValue: 0),
                    .attribute("celsius", .integer64, defaultValue: 0),
                ], uniquenessConstraints: [["seq"]])
        ])
    }

    /// One measured run.
    struct Run {
        let streams: Int
        let nonReaders: Int
        let latencies: [Int64]
        /// Transactions a reading client did not get by the end (it should be none).
        let missing: Int
        let achievedRate: Double
        var p50: Double { percentile(latencies, 0.5) / 1e6 }
        var p99: Double { percentile(latencies, 0.99) / 1e6 }
    }

    func run(into report: inout Report) async throws {
        let scratch = try ScratchDirectory("fan-out")
        defer { scratch.remove() }
        let modelFile = scratch.file("model.json")
        try JSONEncoder().encode(try Self.model()).write(to: modelFile)
        let agent = try SyncAgentProcess.binary()
        let initialized = try SyncAgentProcess.run(agent, ["init", "--model", modelFile.path, "--directory", scratch.url.path])
        guard initialized == 0 else { throw BenchError("sync-agent init failed (exit \(initialized))") }
        let largest = streamCounts.max() ?? 1
        let serve = try SyncAgentProcess(
            agent,
            [
                // Room for the streams of one row while those of the row before are still being closed.
                "serve", "--directory", scratch.url.path, "--listen", "127.0.0.1:0", "--max-streams", String(3 * (largest + nonReaders)),
                "--max-connections", String(3 * (largest + nonReaders) + 16),
            ])
        defer { serve.stop() }
        let port = try serve.port()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The writer shares the store as every process does: its commits ring the bell serve
        // listens to.
        let stack = try DataStack.open(model: .model(try Self.model()), storeURL: scratch.file("ambar.sqlite"), name: "bench")
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(scratch.url))
        do {
            while !sync.isConnected { try await Task.sleep(for: .milliseconds(10)) }
            try await measure(serve: serve, port: port, group: group, stack: stack, into: &report)
        } catch {
            await sync.stop()
            try? await group.shutdownGracefully()
            throw error
        }
        await sync.stop()
        try await group.shutdownGracefully()
    }

    /// The runs, with serve listening on `port`, the clients' loops in `group` and this process
    /// writing to `stack`.
    private func measure(serve: SyncAgentProcess, port: Int, group: any EventLoopGroup, stack: DataStack, into report: inout Report) async throws {
        let largest = streamCounts.max() ?? 1
        let writer = try stack.importerContext()
        var sequence: Int64 = 0

        // Memory per idle stream: serve's RSS with the streams open and nothing written.
        progress("change streams: serve's memory with \(largest) idle streams")
        let before = try serve.residentBytes()
        let idle = try await SSEClient.open(count: largest, filters: filters, port: port, group: group, reading: true)
        let after = try serve.residentBytes()
        try await SSEClient.close(idle)
        let perStream = Double(after - before) / Double(largest) / 1024

        var runs: [Run] = []
        for count in streamCounts {
            progress("change streams: \(count) streams, \(rate) transactions/s for \(seconds) s")
            runs.append(try await measure(streams: count, nonReaders: 0, port: port, group: group, source: .serve(writer), sequence: &sequence))
        }
        progress("change streams: \(largest) streams and \(nonReaders) clients that never read")
        let stalled = try await measure(
            streams: largest, nonReaders: nonReaders, port: port, group: group, source: .serve(writer), sequence: &sequence)

        // The baseline: the same clients on a bare NIO fan-out, at each count.
        let raw = try ChildProcess(role: "fanout-raw", [])
        let announced = raw.line()
        guard announced.hasPrefix("port "), let rawPort = Int(announced.dropFirst(5)) else {
            throw BenchError("the raw fan-out did not start: \(announced)")
        }
        var rawRuns: [Int: Run] = [:]
        var rawSequence: Int64 = 0
        for count in streamCounts {
            progress("change streams, raw NIO fan-out: \(count) streams, \(rate) transactions/s for \(seconds) s")
            rawRuns[count] = try await measure(streams: count, nonReaders: 0, port: rawPort, group: group, source: .raw(raw), sequence: &rawSequence)
        }
        raw.tell("quit")

        let atLargest = runs.last { $0.streams == largest }
        let met =
            (atLargest.map { $0.p50 <= 5 && $0.p99 <= 50 && $0.missing == 0 } ?? false) && perStream <= 64
            && stalled.p50 <= 5 && stalled.p99 <= 50 && stalled.missing == 0
        var figures: [Figure] = []
        for run in runs {
            let baseline = rawRuns[run.streams]
            figures.append(
                Figure(
                    approach: "commit→event p50, \(run.streams) stream(s)", value: run.p50, unit: "ms", ratio: baseline.map { run.p50 / $0.p50 },
                    ratioAgainst: "raw NIO fan-out p50"))
            figures.append(
                Figure(
                    approach: "commit→event p99, \(run.streams) stream(s)", value: run.p99, unit: "ms", ratio: baseline.map { run.p99 / $0.p99 },
                    ratioAgainst: "raw NIO fan-out p99"))
        }
        for count in streamCounts {
            guard let run = rawRuns[count] else { continue }
            figures.append(Figure(approach: "raw NIO fan-out p50, \(count) stream(s)", value: run.p50, unit: "ms"))
            figures.append(Figure(approach: "raw NIO fan-out p99, \(count) stream(s)", value: run.p99, unit: "ms"))
        }
        figures.append(Figure(approach: "commit→event p50, \(largest) streams + \(nonReaders) never reading", value: stalled.p50, unit: "ms"))
        figures.append(Figure(approach: "commit→event p99, \(largest) streams + \(nonReaders) never reading", value: stalled.p99, unit: "ms"))
        figures.append(Figure(approach: "serve's memory per idle stream (RSS)", value: perStream, unit: "KB"))
        let missing = (runs + [stalled] + rawRuns.values).map(\.missing).reduce(0, +)
        let achieved = (runs + [stalled]).map(\.achievedRate).min() ?? 0
        report.results.append(
            WorkloadResult(
                number: 12, title: "Change streams fanned out",
                figures: figures,
                target: "at \(largest) streams: p50 ≤ 5 ms, p99 ≤ 50 ms; ≤ 64 KB per idle stream; clients that never read change neither", met: met,
                note:
                    "sync-agent serve on loopback, this process writing one object per transaction at \(rate) transactions/s (the slowest run achieved \(Int(achieved))) for \(seconds) s per row; its NIO HTTP clients (one event-loop thread) follow /v1/changes, half unfiltered and half filtered on \(filters) distinct filters (celsius >= 0, 10, …, 90), each recording when each transaction's id: arrives; latency from just after the save returned to that arrival, every client's transactions pooled. Transactions a reading client had not received 5 s after the last write: \(missing). Idle-stream memory: serve's RSS with \(largest) streams open and nothing written, less its RSS before, per stream. Non-reading clients send their request and never read a byte (their queues pass --stream-queue and their streams go on on their own, blocked on the socket). Baseline: the same clients following a bare NIO HTTP fan-out in a child process (one event loop per core), told each token on a pipe the moment this process would have committed it, writing one event of the shape serve sends for a one-object insert to every stream: no bell, ledger, encoding, filter or queue. Published anchors: Electric 6 ms write → client, Supabase Realtime 6 ms median"
            ))
    }

    /// Opens `streams` reading clients (and `nonReaders` that never read), writes at `rate` for
    /// `seconds`, and collects every reading client's latencies.
    /// What the clients follow: serve, which streams what `writer` commits, or the raw fan-out
    /// child, told each token.
    private enum Source {
        case serve(ManagedObjectContext)
        case raw(ChildProcess)
    }

    private func measure(
        streams: Int, nonReaders: Int, port: Int, group: any EventLoopGroup, source: Source, sequence: inout Int64
    ) async throws -> Run {
        let stalled = try await SSEClient.open(count: nonReaders, filters: filters, port: port, group: group, reading: false)
        let clients = try await SSEClient.open(count: streams, filters: filters, port: port, group: group, reading: true)
        let transactions = max(2, Int(Double(rate) * seconds))
        var start = sequence
        let commits: [Int64: Int64]
        let elapsed: Double
        switch source {
        case .serve(let writer):
            (commits, elapsed) = try writer.performAndWait {
                let coordinator = writer.persistentStoreCoordinator
                return try pace(transactions) {
                    let reading = try writer.insertObject(entityName: "Reading")
                    start += 1
                    try reading.setValue(.integer(start), forKey: "seq")
                    try reading.setValue(.integer(Int64.random(in: 0..<100)), forKey: "celsius")
                    try writer.save()
                    try writer.reset()
                    return try coordinator.currentHistoryToken()
                }
            }
        case .raw(let child):
            (commits, elapsed) = pace(transactions) {
                start += 1
                child.tell(String(start))
                return start
            }
        }
        sequence = start
        let last = commits.keys.max() ?? 0
        // Every reading client is sent every transaction (a filtered one an upsert or a remove).
        let deadline = now() + 5_000_000_000
        while now() < deadline, !clients.allSatisfy({ $0.recorder.highest >= last }) { try await Task.sleep(for: .milliseconds(20)) }
        var latencies: [Int64] = []
        var missing = 0
        for client in clients {
            let arrivals = client.recorder.arrivals
            for (token, committed) in commits {
                if let arrived = arrivals[token] { latencies.append(max(0, arrived - committed)) } else { missing += 1 }
            }
        }
        try await SSEClient.close(clients + stalled)
        return Run(
            streams: streams, nonReaders: nonReaders, latencies: latencies.sorted(), missing: missing, achievedRate: Double(transactions) / elapsed)
    }

    /// Runs `transaction` `transactions` times at `rate` per second; returns when each returned
    /// (by the token it returned, CLOCK_MONOTONIC ns) and the seconds it all took.
    private func pace(_ transactions: Int, _ transaction: () throws -> Int64) rethrows -> (commits: [Int64: Int64], elapsed: Double) {
        let interval = Int64(1e9 / Double(rate))
        var commits: [Int64: Int64] = [:]
        let began = now()
        for index in 0..<transactions {
            let due = began + Int64(index) * interval
            while now() < due { usleep(UInt32(max(1, (due - now()) / 1000))) }
            commits[try transaction()] = now()
        }
        return (commits, Double(now() - began) / 1e9)
    }
}
