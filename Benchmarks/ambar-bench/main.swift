// ambar-bench: AmbarStack side by side with raw SQLite and GRDB, and cross-process latency
// against the socket limit. Every ratio is against a baseline measured in this run.
//
//   scripts/run-benchmarks            full run (release); writes docs/benchmarks/
//   ambar-bench --smoke [--output D]  a few seconds, small sizes (CI runs this)
//   ambar-bench --only 1,6            chosen workloads
//   ambar-bench --postgres URL        also workloads 10 and 11 on that PostgreSQL server
//
// The same binary plays the child processes (receiver, raw-receiver, hub-receiver,
// memory-ambar, memory-raw, fanout-raw); those roles are internal.
import Foundation
import Logging

/// What a run measures, and how big.
struct Plan {
    var smoke = false
    var repetitions = 5
    var output: URL?
    var only: Set<Int> = Set(1...9).union([10, 11, 12])
    /// A PostgreSQL server for workloads 10 and 11 (`--postgres URL`); they are skipped without one.
    var postgres: URL?

    var rows: Int { smoke ? 2_000 : 100_000 }
    var updates: Int { smoke ? 200 : 10_000 }
    var smallSaves: Int { smoke ? 100 : 2_000 }
    var mergeObjects: Int { smoke ? 2_000 : 100_000 }
    var crossProcessSaves: Int { smoke ? 50 : 1_000 }
    var receiverCounts: [Int] { smoke ? [1, 2] : [1, 8] }
    var hubMessages: Int { smoke ? 2_000 : 100_000 }
    var hubReceivers: Int { smoke ? 2 : 8 }
    var memoryObjects: Int { smoke ? 20_000 : 1_000_000 }
    var postgresRows: Int { smoke ? 2_000 : 50_000 }
    var viewerSeconds: Double { smoke ? 1 : 10 }
    var viewerSearchSeconds: Double { smoke ? 0.5 : 3 }
    var viewerMaximumPace: Int { smoke ? 40_000 : 640_000 }
    var streamCounts: [Int] { smoke ? [1, 10] : [1, 100, 1_000] }
    var streamSeconds: Double { smoke ? 1 : 5 }
    var nonReaders: Int { smoke ? 2 : 50 }

    /// How to call the benchmark, printed by `--help` and after a bad argument.
    static let usage = """
        usage: ambar-bench [--smoke] [--repetitions N] [--output DIR] [--only 1,2,…] [--postgres URL]
          --smoke          a few seconds, small sizes
          --repetitions N  repetitions per bulk workload (the median is reported; default 5)
          --output DIR     also write latest.json, latest.md and cross-process-latency.svg to DIR
          --only 1,6       run only these workloads (1…12)
          --postgres URL   run workloads 10 and 11 against this PostgreSQL server
        """

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--smoke":
                smoke = true
                repetitions = 1
            case "--repetitions": repetitions = max(1, Int(rest.popFirst() ?? "") ?? repetitions)
            case "--output": output = rest.popFirst().map { URL(fileURLWithPath: $0, isDirectory: true) }
            case "--only": only = Set((rest.popFirst() ?? "").split(separator: ",").compactMap { Int($0) })
            case "--postgres": postgres = rest.popFirst().flatMap { URL(string: $0) }
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default: throw BenchError("unknown argument \(argument)\n\(Self.usage)")
            }
        }
    }
}

func runSuite(_ plan: Plan) async throws {
    var report = Report(
        date: ISO8601DateFormatter().string(from: Date()), mode: plan.smoke ? "smoke run, small sizes" : "full run, medians of \(plan.repetitions)",
        machine: .current())
    progress("generating \(plan.rows) rows")
    let data = Dataset(count: plan.rows, updates: plan.updates)
    if !plan.only.isDisjoint(with: 1...4) {
        try await BulkWorkloads(data: data, repetitions: plan.repetitions, batchSize: 5_000, smallSaves: plan.smallSaves).run(into: &report)
        report.results.removeAll { !plan.only.contains($0.number) }
    }
    if plan.only.contains(5) { try SmartMerge(objects: plan.mergeObjects, repetitions: min(plan.repetitions, 3)).run(into: &report) }
    var crossProcess = CrossProcess(saves: plan.crossProcessSaves, receiverCounts: plan.receiverCounts)
    if plan.only.contains(6) { try await crossProcess.run(into: &report) }
    if plan.only.contains(7) {
        try await HubThroughput(messages: plan.hubMessages, receivers: plan.hubReceivers, saves: plan.crossProcessSaves).run(into: &report)
    }
    if plan.only.contains(8) { try Memory(objects: plan.memoryObjects, batchSize: 5_000).run(into: &report) }
    if plan.only.contains(9) {
        try await ViewersKeepingUp(pace: 20_000, seconds: plan.viewerSeconds, searchSeconds: plan.viewerSearchSeconds, maximumPace: plan.viewerMaximumPace).run(
            into: &report)
    }
    if !plan.only.isDisjoint(with: [10, 11]) {
        if let server = plan.postgres {
            try await PostgresWorkloads(
                server: server, data: Dataset(count: plan.postgresRows, updates: plan.updates), repetitions: min(plan.repetitions, 3),
                batchSize: 5_000, smallSaves: plan.smallSaves, crossProcessSaves: plan.crossProcessSaves, receivers: plan.receiverCounts.last ?? 1
            ).run(into: &report)
        } else {
            progress("workloads 10 and 11 (PostgreSQL) skipped: no --postgres URL (scripts/run-benchmarks starts a private server)")
        }
    }

    if plan.only.contains(12) {
        try await ChangeStreamFanOut(streamCounts: plan.streamCounts, rate: 500, seconds: plan.streamSeconds, nonReaders: plan.nonReaders).run(into: &report)
    }

    print(report.table())
    guard let output = plan.output else { return }
    try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    try encoder.encode(report).write(to: output.appendingPathComponent("latest.json"))
    try report.markdown().write(to: output.appendingPathComponent("latest.md"), atomically: true, encoding: .utf8)
    if plan.only.contains(6) {
        let receivers = plan.receiverCounts.last ?? 0
        let svg = Histogram.svg(
            title: "Commit → merged, \(receivers) receivers (workload 6)",
            series: [
                ("AmbarStack", "#c0392b", crossProcess.histogram.ambar),
                ("raw socket notify + SELECT", "#2c3e50", crossProcess.histogram.raw),
            ])
        try svg.write(to: output.appendingPathComponent("cross-process-latency.svg"), atomically: true, encoding: .utf8)
    }
    progress("wrote \(output.path)/latest.json, latest.md and cross-process-latency.svg")
}

// Logs go to standard error: standard output carries the table (and the children's protocol).
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}
signal(SIGPIPE, SIG_IGN)

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "viewer" where arguments.count == 2:
    try ViewersKeepingUp.viewer(directory: URL(fileURLWithPath: arguments[1]))
case "receiver" where arguments.count == 2:
    try CrossProcessRoles.ambarReceiver(directory: URL(fileURLWithPath: arguments[1]))
case "raw-receiver" where arguments.count == 3:
    try CrossProcessRoles.rawReceiver(store: arguments[1], socket: arguments[2])
case "hub-receiver" where arguments.count == 3:
    try CrossProcessRoles.hubReceiver(socket: arguments[1], storeUUID: try storeUUID(arguments[2]))
case "pg-receiver" where arguments.count == 3:
    try CrossProcessRoles.postgresReceiver(directory: URL(fileURLWithPath: arguments[1]), store: URL(string: arguments[2])!)
case "pg-raw-receiver" where arguments.count == 2:
    try CrossProcessRoles.rawPostgresReceiver(store: URL(string: arguments[1])!)
case "fanout-raw" where arguments.count == 1:
    try RawFanOut.serve()
case "memory-ambar" where arguments.count == 4:
    try Memory.ambarChild(objects: Int(arguments[1]) ?? 0, batchSize: Int(arguments[2]) ?? 5_000, file: URL(fileURLWithPath: arguments[3]))
case "memory-raw" where arguments.count == 3:
    try Memory.rawChild(objects: Int(arguments[1]) ?? 0, file: URL(fileURLWithPath: arguments[2]))
default:
    let plan: Plan
    do {
        plan = try Plan(arguments)
    } catch {
        FileHandle.standardError.write(Data("ambar-bench: \(error)\n".utf8))
        exit(2)
    }
    Task.detached {
        do {
            try await runSuite(plan)
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("ambar-bench: \(error)\n".utf8))
            exit(1)
        }
    }
    dispatchMain()
}
