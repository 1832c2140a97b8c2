import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation

/// `sync-agent demo`: the whole system in one command, on a temporary store, with no setup.
///
/// Three processes of this binary share one store: an importer writes products (inserts, then
/// updates and deletes) while two viewers keep a fetched-results controller live on their main
/// contexts. The hub is elected among them. The demo then compares a digest of every viewer's
/// in-memory objects with the store's, and says "converged: yes" only when all agree.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run an importer and two viewers on a temporary shared store and show them converge.")

    @Option(help: "How many products the importer inserts.")
    var records = 5000

    @Option(help: "Products per transaction.")
    var batch = 250

    @Flag(help: "Keep the temporary directory (its path is printed).")
    var keep = false

    @Option(
        help: ArgumentHelp(
            "Run on a store in this PostgreSQL database instead of a temporary SQLite file (an empty database: scripts/run-demo --postgres starts a private server). The processes still share a temporary directory for their hub.",
            valueName: "postgres-url"))
    var store: String?

    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        guard records > 0, batch > 0 else { throw ValidationError("--records and --batch must be positive.") }
        if let store {
            guard PostgreSQLSupport.isURL(store), let url = URL(string: store) else {
                throw ValidationError("--store takes a postgres:// or postgresql:// URL.")
            }
            try PostgreSQLSupport.validate(url)
        }
    }

    func run() async throws {
        bootstrapLogging(level: .warning)
        var template = Array(FileManager.default.temporaryDirectory.appendingPathComponent("ambar-demo-XXXXXX").path.utf8CString)
        guard let made = mkdtemp(&template) else { throw DemoFailure("cannot create a temporary directory: \(String(cString: strerror(errno)))") }
        let directory = URL(fileURLWithPath: String(cString: made), isDirectory: true)
        defer { if !keep { try? FileManager.default.removeItem(at: directory) } }  // try?: cleanup of the demo's temporary directory
        let storeURL = directory.appendingPathComponent("ambar.sqlite")
        let server = store.flatMap { URL(string: $0) }
        let storeDescription: StoreDescription = try server.map(PostgreSQLSupport.storeDescription) ?? .sqlite(storeURL)
        _ = try PersistentStoreCoordinator(model: try DemoModel.make(), store: storeDescription)
        let shown = server.map(PostgreSQLSupport.display) ?? storeURL.path
        if !json { say("Ambar demo: 1 importer and 2 viewers (3 processes) share \(shown)") }

        let storeArguments = store.map { ["--store", $0] } ?? []
        let viewers = try (1...2).map { try DemoProcess(role: "viewer \($0)", arguments: ["demo-viewer", "--directory", directory.path] + storeArguments) }
        for viewer in viewers { _ = try viewer.receive(timeout: 30) }
        let importer = try DemoProcess(
            role: "importer",
            arguments: [
                "demo-importer", "--directory", directory.path, "--records", "\(records)", "--batch", "\(batch)",
            ] + storeArguments)
        let imported = try importer.receive(timeout: 300)
        importer.finish(timeout: 10)
        let token = imported["token"] as? Int ?? -1
        var answers: [[String: Any]] = []
        for viewer in viewers {
            try viewer.send("wait \(token)")
            answers.append(try viewer.receive(timeout: 90))
        }
        for viewer in viewers { viewer.finish(timeout: 10) }

        // The reference: the store itself, read by this fourth process.
        let referenceStack =
            try server.map { try DataStack.open(storeType: try PostgreSQLSupport.stackType($0), model: .model(try DemoModel.make()), name: "demo-check") }
            ?? DataStack.open(model: .model(try DemoModel.make()), storeURL: storeURL, name: "demo-check")
        let reference = try DemoModel.storeDigest(referenceStack)
        let digests = [imported["digest"] as? String] + answers.map { $0["digest"] as? String }
        let converged =
            digests.allSatisfy { $0 == reference.digest }
            && answers.allSatisfy { ($0["token"] as? Int ?? -1) >= token && ($0["count"] as? Int) == reference.count }

        let written = (imported["inserted"] as? Int ?? 0) + (imported["updated"] as? Int ?? 0) + (imported["deleted"] as? Int ?? 0)
        let seconds = imported["seconds"] as? Double ?? .nan
        let rate = Double(written) / seconds
        let latencies = answers.map { LatencySummary(samples: $0["latencies_ms"] as? [Double] ?? []) }
        let all = LatencySummary(samples: latencies.flatMap(\.samples))
        // The lag of the transactions committed in the run's first and last second: flat when
        // the viewers keep up, growing when they fall behind.
        let timed = answers.flatMap { answer in
            zip(answer["commits_s"] as? [Double] ?? [], answer["latencies_ms"] as? [Double] ?? [])
        }
        let firstCommit = timed.map(\.0).min() ?? 0
        let lastCommit = timed.map(\.0).max() ?? 0
        let firstSecond = LatencySummary(samples: timed.filter { $0.0 < firstCommit + 1 }.map(\.1))
        let lastSecond = LatencySummary(samples: timed.filter { $0.0 >= lastCommit - 1 }.map(\.1))
        if json {
            try JSONLine.print([
                "records_per_second": rate, "written": written, "transactions": imported["transactions"] ?? 0,
                "latency_p50_ms": all.p50, "latency_p99_ms": all.p99, "converged": converged,
                "lag_first_second_p50_ms": firstSecond.samples.isEmpty ? NSNull() : firstSecond.p50 as Any,
                "lag_last_second_p50_ms": lastSecond.samples.isEmpty ? NSNull() : lastSecond.p50 as Any,
                "digest": reference.digest, "count": reference.count,
                "viewers": zip(answers, latencies).map {
                    ["pid": $0["pid"] ?? 0, "digest": $0["digest"] ?? "", "merges": $1.samples.count, "p50_ms": $1.p50, "p99_ms": $1.p99] as [String: Any]
                },
            ])
        } else {
            say(
                String(
                    format: "importer  pid %d: %d inserted, %d updated, %d deleted in %d transactions, %.2f s",
                    imported["pid"] as? Int ?? 0, imported["inserted"] as? Int ?? 0, imported["updated"] as? Int ?? 0,
                    imported["deleted"] as? Int ?? 0, imported["transactions"] as? Int ?? 0, seconds))
            say(String(format: "           %.0f records/s imported", rate))
            for (answer, latency) in zip(answers, latencies) {
                say(
                    String(
                        format: "viewer    pid %d: %d transactions merged live, commit→merged p50 %.2f ms, p99 %.2f ms",
                        answer["pid"] as? Int ?? 0, latency.samples.count, latency.p50, latency.p99))
            }
            say(String(format: "latency   all viewers: p50 %.2f ms, p99 %.2f ms", all.p50, all.p99))
            say(
                String(
                    format: "lag       p50 of the transactions committed in the first second %.2f ms, in the last second %.2f ms", firstSecond.p50,
                    lastSecond.p50))
            say(
                "digest    store \(reference.digest) (\(reference.count) products); importer \(digests[0] ?? "-"); "
                    + answers.enumerated().map { "viewer \($0.offset + 1) \($0.element["digest"] as? String ?? "-") (\($0.element["count"] as? Int ?? 0))" }
                    .joined(separator: "; "))
            if keep { say("kept      \(directory.path)") }
            say("converged: \(converged ? "yes" : "NO")")
        }
        if !converged { throw ExitCode(1) }
    }

    private func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
