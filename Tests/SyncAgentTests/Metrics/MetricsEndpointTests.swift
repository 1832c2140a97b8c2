import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `--metrics`: a hub, an inbox agent and a watcher each serve their metrics in Prometheus's text
/// format; a real Prometheus parser (Debian's `prometheus_client`, Python) reads them while the
/// processes work, and the values move as the work does — saves, inbox files, relayed doorbells,
/// merges and their latency, the ledger's head and a consumer's lag.
final class MetricsEndpointTests: AgentTestCase {
    private var inbox: URL { directory.url.appendingPathComponent("inbox/metered") }

    private func drop(_ name: String, _ lines: [String]) throws {
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let temporary = inbox.appendingPathComponent(".\(name).part")
        try (lines.joined(separator: "\n") + "\n").write(to: temporary, atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(temporary.path, inbox.appendingPathComponent(name).path), 0)
    }

    func testAPrometheusParserReadsMetricsThatFollowTheWork() throws {
        try initStore()
        let dir = directory.url.path
        let logs = ["hub", "run", "watch"].map { directory.url.appendingPathComponent("\($0).log") }
        _ = try startAgent(["hub", "--directory", dir, "--metrics", "127.0.0.1:0"], log: logs[0])
        let hub = try metricsEndpoint(in: logs[0])
        _ = try startAgent(
            ["run", "--name", "metered", "--entity", "Item", "--key", "uid", "--directory", dir, "--poll-interval", "50", "--metrics", "127.0.0.1:0"],
            log: logs[1])
        let run = try metricsEndpoint(in: logs[1])
        // The watcher's on a Unix socket.
        let metricsSocket = directory.url.appendingPathComponent("metrics/watch.sock").path
        _ = try startAgent(["watch", "--directory", dir, "--metrics", "unix:" + metricsSocket], log: logs[2])
        XCTAssertEqual(try metricsEndpoint(in: logs[2]), "unix:" + metricsSocket)
        let watcher = "unix:" + metricsSocket

        // Before any work: the hub serves both processes; nothing is saved or imported.
        XCTAssertTrue(try eventually(timeout: 30) { value(try scrape(hub), "ambar_hub_peers") == 2 }, "the hub counts its two peers")
        let before = try scrape(run)
        XCTAssertEqual(value(before, "ambar_inbox_files_imported_total", ["agent": "metered"]) ?? 0, 0)
        XCTAssertEqual(value(before, "ambar_ledger_head_token"), 0)

        // An inbox file: a save of 3 objects, relayed by the hub to the watcher, merged there.
        try drop("one.ndjson", [#"{"uid":"a","value":1}"#, #"{"uid":"b","value":2}"#, #"{"uid":"c","value":3}"#])
        XCTAssertTrue(
            try eventually(timeout: 30) { value(try scrape(run), "ambar_inbox_files_imported_total", ["agent": "metered"]) == 1 },
            "the agent counts the imported file")
        let afterImport = try scrape(run)
        XCTAssertGreaterThanOrEqual(value(afterImport, "ambar_saves_total") ?? 0, 1)
        XCTAssertEqual(value(afterImport, "ambar_inbox_objects_imported_total", ["agent": "metered"]), 3)
        XCTAssertGreaterThanOrEqual(value(afterImport, "ambar_save_duration_seconds_count") ?? 0, 1)
        XCTAssertEqual(value(afterImport, "ambar_inbox_files_failed_total", ["agent": "metered"]) ?? 0, 0)
        XCTAssertTrue(
            try eventually(timeout: 30) { (value(try scrape(hub), "ambar_hub_frames_left_to_the_bell_total") ?? 0) >= 1 },
            "the hub left the doorbell to the bell, which the agent rang and the watcher hears")
        XCTAssertEqual(value(try scrape(hub), "ambar_hub_relayed_frames_total") ?? 0, 0, "no frame went to a process the bell woke")
        XCTAssertTrue(try eventually(timeout: 30) { value(try scrape(watcher), "ambar_merges_total") == 1 }, "the watcher merged the save")
        let merged = try scrape(watcher)
        XCTAssertEqual(value(merged, "ambar_merge_latency_seconds_count"), 1)
        XCTAssertGreaterThanOrEqual(value(merged, "ambar_bell_rings_received_total") ?? 0, 1)
        XCTAssertEqual(value(merged, "ambar_doorbells_received_total") ?? 0, 0, "the hub sent the watcher nothing: the bell woke it")
        XCTAssertEqual(value(merged, "ambar_saves_total") ?? 0, 0, "the watcher saved nothing")
        XCTAssertEqual(value(try scrape(hub), "ambar_ledger_head_token"), 1)
        XCTAssertEqual(value(try scrape(hub), "ambar_ledger_transactions"), 1)

        // A bad file is counted as failed.
        try drop("bad.ndjson", [#"{"uid":"d","value":"not a number"}"#])
        XCTAssertTrue(
            try eventually(timeout: 30) { value(try scrape(run), "ambar_inbox_files_failed_total", ["agent": "metered"]) == 1 },
            "the agent counts the failed file")

        // A durable consumer that stops while the store moves on: its lag grows.
        let consumer = try startAgent(["watch", "--directory", dir, "--consumer", "alerts", "--from", "oldest", "--json"])
        XCTAssertTrue(
            try eventually(timeout: 30) { value(try scrape(hub), "ambar_consumer_lag_tokens", ["consumer": "alerts", "kind": "consumer"]) == 0 },
            "the consumer caught up")
        kill(consumer.processIdentifier, SIGTERM)
        consumer.waitUntilExit()
        try drop("two.ndjson", [#"{"uid":"e","value":5}"#])
        XCTAssertTrue(
            try eventually(timeout: 30) { value(try scrape(hub), "ambar_consumer_lag_tokens", ["consumer": "alerts", "kind": "consumer"]) == 1 },
            "the stopped consumer is one transaction behind")
        XCTAssertGreaterThan(value(try scrape(hub), "ambar_consumer_lag_seconds", ["consumer": "alerts"]) ?? 0, 0)

        // A consumer removed has no lag any more: its series goes, not left at its last value.
        XCTAssertEqual(try agent(["consumers", "--directory", dir, "--remove", "alerts"]).status, 0)
        XCTAssertTrue(
            try eventually(timeout: 30) { value(try scrape(hub), "ambar_consumer_lag_tokens", ["consumer": "alerts", "kind": "consumer"]) == nil },
            "the removed consumer's lag series is gone")
        XCTAssertNil(value(try scrape(hub), "ambar_consumer_lag_seconds", ["consumer": "alerts"]))

        // The hub's process keeps the store's upkeep: a purge at once, a passive checkpoint of the
        // write-ahead log every 5 seconds.
        XCTAssertTrue(
            try eventually(timeout: 30) { (value(try scrape(hub), "ambar_wal_checkpoints_total", ["mode": "passive"]) ?? 0) >= 1 },
            "the hub counts its checkpoints")
        let upkeep = try scrape(hub)
        XCTAssertGreaterThanOrEqual(value(upkeep, "ambar_purges_total") ?? 0, 1)
        XCTAssertNotNil(value(upkeep, "ambar_wal_bytes"))
        XCTAssertEqual(value(upkeep, "ambar_ledger_unreadable"), 0)
    }

    /// A new store with a hub and a watcher serving their metrics, once the watcher is connected to
    /// the hub; their metrics endpoints. (Connected, the watcher checks the ledger every 2
    /// seconds; until then at every poll, 4 times a second, when a check could read a transaction
    /// whose bell is still waking the watcher's thread.)
    private func hubAndConnectedWatcher() throws -> (hub: String, watcher: String) {
        try initStore()
        let dir = directory.url.path
        let hubLog = directory.url.appendingPathComponent("hub.log")
        _ = try startAgent(["hub", "--directory", dir, "--metrics", "127.0.0.1:0"], log: hubLog)
        let hub = try metricsEndpoint(in: hubLog)
        let log = directory.url.appendingPathComponent("watch.log")
        _ = try startAgent(["watch", "--directory", dir, "--metrics", "127.0.0.1:0"], log: log)
        let watcher = try metricsEndpoint(in: log)
        XCTAssertTrue(try eventually(timeout: 30) { value(try scrape(hub), "ambar_hub_peers") == 1 }, "the watcher is connected to the hub")
        return (hub, watcher)
    }

    /// Two lines of `Item`s to import (two batches with `--batch-size 1`).
    private func twoLines() throws -> URL {
        let file = directory.url.appendingPathComponent("two.ndjson")
        try "{\"uid\":\"a\",\"value\":1}\n{\"uid\":\"b\",\"value\":2}\n".write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// `sync-agent import` announces each commit (the shared-memory bell; the hub's frame once it
    /// is connected): a watcher merges both batches without its periodic ledger check having to
    /// find them — that check counts what no doorbell brought, and it counts nothing here.
    func testAnImportAnnouncesItsCommitsToTheOtherProcesses() throws {
        let watcher = try hubAndConnectedWatcher().watcher
        XCTAssertTrue(try eventually(timeout: 30) { value(try scrape(watcher), "ambar_ledger_head_token") == 0 }, "the watcher serves its metrics")
        let imported = try agent([
            "import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", "--batch-size", "1", try twoLines().path,
        ])
        XCTAssertEqual(imported.status, 0, imported.error)
        XCTAssertTrue(try eventually(timeout: 30) { value(try scrape(watcher), "ambar_merges_total") == 2 }, "the watcher merged both batches")
        // Read again: a check that had found them counts them as it queues their merge.
        let after = try scrape(watcher)
        XCTAssertEqual(value(after, "ambar_ledger_checks_found_missed_total") ?? 0, 0, "no ledger check had to find the import's transactions")
        XCTAssertEqual(value(after, "ambar_merge_latency_seconds_count"), 2)
    }

    /// A writer whose doorbells the watcher cannot hear — it reaches the store through another
    /// directory, by a symbolic link to the store file, so it rings that directory's bell and
    /// looks for that directory's hub — still reaches the watcher: its periodic ledger check
    /// finds the transactions, merges them and counts them as work no doorbell brought.
    func testALedgerCheckCountsTheWorkNoDoorbellBrought() throws {
        let (hub, watcher) = try hubAndConnectedWatcher()
        let elsewhere = directory.url.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: elsewhere.appendingPathComponent(store.lastPathComponent), withDestinationURL: store)
        let imported = try agent([
            "import", "--directory", elsewhere.path, "--no-hub", "--entity", "Item", "--key", "uid", "--batch-size", "1", try twoLines().path,
        ])
        XCTAssertEqual(imported.status, 0, imported.error)
        XCTAssertEqual(value(try scrape(hub), "ambar_hub_peers"), 1, "the writer never reached the watcher's hub")
        XCTAssertTrue(try eventually(timeout: 30) { value(try scrape(watcher), "ambar_merges_total") == 2 }, "the watcher merged both batches")
        let found = value(try scrape(watcher), "ambar_ledger_checks_found_missed_total") ?? 0
        XCTAssertTrue((1...2).contains(found), "the ledger checks found the batches no doorbell announced: \(found)")
    }

    /// The hub's upkeep as it happens: with a retention of one second the ledger's transactions
    /// are purged and counted, the oldest token kept moves up, and once the store is idle for 10
    /// seconds the write-ahead log that the imports grew is truncated.
    func testPurgesAndTheWriteAheadLogFollowTheUpkeep() throws {
        try initStore()
        let dir = directory.url.path
        let log = directory.url.appendingPathComponent("hub.log")
        _ = try startAgent(["hub", "--directory", dir, "--history-retention", "1", "--metrics", "127.0.0.1:0"], log: log)
        let hub = try metricsEndpoint(in: log)
        XCTAssertTrue(try eventually(timeout: 30) { value(try scrape(hub), "ambar_hub_peers") != nil }, "the hub serves")
        for batch in 0..<3 {
            let file = directory.url.appendingPathComponent("batch-\(batch).ndjson")
            try (0..<200).map { #"{"uid":"b\#(batch)-\#($0)","value":\#($0)}"# }.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            let imported = try agent(["import", "--directory", dir, "--entity", "Item", "--key", "uid", file.path])
            XCTAssertEqual(imported.status, 0, imported.error)
        }
        // How large the log grew depends on when the upkeep's passive checkpoints ran between the
        // imports (after one, the next import writes from the start of the file again): it holds
        // at least the last import, which is more than the marker below.
        let grown = try XCTUnwrap(value(try scrape(hub), "ambar_wal_bytes"))
        XCTAssertGreaterThan(grown, Self.walBytes(frames: Self.markerFrames), "the imports grew the write-ahead log")

        XCTAssertTrue(
            try eventually(timeout: 30) { (value(try scrape(hub), "ambar_purged_transactions_total") ?? 0) >= 3 },
            "the three imports' transactions are purged once older than a second")
        let purged = try scrape(hub)
        XCTAssertGreaterThanOrEqual(value(purged, "ambar_ledger_oldest_token") ?? 0, 3, "the oldest token kept moved past them")
        XCTAssertGreaterThanOrEqual(value(purged, "ambar_purges_total") ?? 0, 2, "a purge every half second")

        XCTAssertTrue(
            try eventually(timeout: 60) {
                let samples = try scrape(hub)
                return (value(samples, "ambar_wal_checkpoints_total", ["mode": "truncate", "result": "done"]) ?? 0) >= 1
            }, "after 10 idle seconds the write-ahead log is truncated")
        // The truncation empties the log; the checkpoint then records a marker in the ledger: a few
        // pages, whatever the imports wrote.
        let truncated = try XCTUnwrap(value(try scrape(hub), "ambar_wal_bytes"))
        XCTAssertLessThanOrEqual(
            truncated, Self.walBytes(frames: Self.markerFrames),
            "the write-ahead log's size follows the truncation (from \(grown) bytes)")
    }

    /// The most pages the checkpoint's marker transaction writes (the ledger's table and indexes).
    private static let markerFrames = 8

    /// The size of a write-ahead log holding `frames` pages of the store's 4 KiB: a 32-byte header,
    /// then each page behind a 24-byte frame header.
    private static func walBytes(frames: Int) -> Double { Double(32 + frames * (24 + 4096)) }

    /// A store on a PostgreSQL server: the hub's LISTEN connection and the server's notification
    /// queue.
    func testTheHubOfAStoreOnAServerReportsItsDoorbellAndTheServersQueue() throws {
        let server: PostgresTestServer
        do {
            server = try PostgresTestServer.startPrivate()
        } catch let unavailable as PostgresTestServer.Unavailable where !PostgresTestServer.isRequired {
            throw XCTSkip("no PostgreSQL server: \(unavailable)")
        }
        let url = try server.url(database: "metered").absoluteString
        let modelFile = directory.url.appendingPathComponent("model.json")
        try JSONEncoder().encode(try itemModel()).write(to: modelFile)
        let created = try agent(["init", "--model", modelFile.path, "--directory", directory.url.path, "--store", url])
        XCTAssertEqual(created.status, 0, created.error)
        let log = directory.url.appendingPathComponent("hub.log")
        _ = try startAgent(["hub", "--directory", directory.url.path, "--store", url, "--metrics", "127.0.0.1:0"], log: log)
        let hub = try metricsEndpoint(in: log)
        XCTAssertTrue(try eventually(timeout: 30) { value(try scrape(hub), "ambar_server_doorbell_listening") == 1 }, "the hub listens")
        let samples = try scrape(hub)
        XCTAssertGreaterThanOrEqual(value(samples, "ambar_server_listeners") ?? 0, 1)
        let usage = try XCTUnwrap(value(samples, "ambar_server_notification_queue_usage"))
        XCTAssertTrue((0...1).contains(usage), "\(usage)")
        XCTAssertNil(value(samples, "ambar_wal_bytes"), "no write-ahead log file for a store on a server")
    }

    /// Off loopback `--metrics` wants a token, as `serve` does; with one, a scrape without it
    /// (or with another) gets 401 and one with it the metrics.
    /// Every family `serve` serves (the libraries' and its own) has a `# HELP` line with the
    /// meaning `docs/metrics.md` gives it, and Prometheus's own `promtool check metrics` passes
    /// the text (it exited 3 on the first family without one).
    func testEveryFamilyHasTheHelpTheDocumentationGivesAndPromtoolPassesIt() throws {
        let promtool = Repository.url(".build/tools/prometheus/usr/bin/promtool")
        guard FileManager.default.isExecutableFile(atPath: promtool.path) else {
            return XCTFail("no promtool at \(promtool.path): scripts/install-deps --tests unpacks it from Debian's prometheus package")
        }
        try initStore()
        let (serve, port, log) = try startServe(["--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        let metrics = try metricsEndpoint(in: log)
        // A stream that reads one transaction: serve's stream metrics are there too.
        let follow = """
            import http.client, sys
            conn = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
            conn.request("GET", "/v1/changes")
            response = conn.getresponse()
            assert response.status == 200, response.status
            positioned = False
            while True:
                line = response.readline().decode()
                assert line, "the stream ended"
                if line.startswith("id: ") and not positioned:
                    positioned = True
                    open(sys.argv[2], "w").close()
                elif line.startswith("data: "):
                    break
            """
        let script = directory.url.appendingPathComponent("follow.py")
        try follow.write(to: script, atomically: true, encoding: .utf8)
        let positioned = directory.url.appendingPathComponent("positioned")
        let reader = try startAgent(
            ["python"], executable: URL(fileURLWithPath: "/usr/bin/python3"), arguments: ["-u", script.path, String(port), positioned.path])
        XCTAssertTrue(eventually(timeout: 60) { FileManager.default.fileExists(atPath: positioned.path) || !reader.isRunning }, "the stream began")
        XCTAssertTrue(FileManager.default.fileExists(atPath: positioned.path), "the stream began with its position")
        let file = directory.url.appendingPathComponent("one.ndjson")
        try #"{"uid":"one","value":1}"#.write(to: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", file.path]).status, 0)
        XCTAssertTrue(eventually(timeout: 60) { !reader.isRunning }, "the stream sent the transaction")
        if reader.isRunning { reader.terminate() } else { XCTAssertEqual(reader.terminationStatus, 0, "the stream's client") }

        let text = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            ["-c", "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())", metrics],
            timeout: 20
        ).output
        // The meanings the documentation gives, as plain text.
        let documentation = try String(contentsOf: Repository.url("docs/metrics.md"), encoding: .utf8)
        var meanings: [String: String] = [:]
        for line in documentation.split(separator: "\n") where line.hasPrefix("| `ambar_") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 6 else { continue }
            meanings[cells[1].replacingOccurrences(of: "`", with: "")] = cells[4...].dropLast().joined(separator: "|").replacingOccurrences(of: "`", with: "")
        }
        let lines = text.split(separator: "\n").map(String.init)
        var families = 0
        for (index, line) in lines.enumerated() where line.hasPrefix("# TYPE ") {
            let name = String(line.dropFirst(7).prefix { $0 != " " })
            families += 1
            XCTAssertNotNil(meanings[name], "docs/metrics.md lists \(name)")
            XCTAssertEqual(index > 0 ? lines[index - 1] : "", "# HELP \(name) \(meanings[name] ?? "?")", "\(name)'s help is the documentation's meaning")
        }
        for name in ["ambar_serve_stream_pages_total", "ambar_serve_stream_queued_bytes", "ambar_merges_total", "ambar_ledger_head_token"] {
            XCTAssertTrue(text.contains("# TYPE \(name) "), "serve serves \(name)")
        }
        XCTAssertGreaterThan(families, 5)

        let exposition = directory.url.appendingPathComponent("metrics.txt")
        try text.write(to: exposition, atomically: true, encoding: .utf8)
        let check = try ProcessRunner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "'\(promtool.path)' check metrics < '\(exposition.path)'"], timeout: 60)
        XCTAssertEqual(check.status, 0, "promtool check metrics: \(check.output)\(check.error)")
    }

    func testOffLoopbackTheMetricsWantAToken() throws {
        try initStore()
        let refused = try agent(["hub", "--directory", directory.url.path, "--metrics", "0.0.0.0:0"])
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.error.contains("--metrics-token-file"), refused.error)
        let tokenFile = directory.url.appendingPathComponent("metrics-token")
        try "scrape-s3cret\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        let log = directory.url.appendingPathComponent("hub.log")
        _ = try startAgent(["hub", "--directory", directory.url.path, "--metrics", "127.0.0.1:0", "--metrics-token-file", tokenFile.path], log: log)
        let url = try metricsEndpoint(in: log)
        // The endpoint answers from the start; the store's gauges are there once the hub has
        // opened the store, which it has when its socket is there.
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        XCTAssertTrue(eventually(timeout: 30) { FileManager.default.fileExists(atPath: socket) }, "the hub serves at \(socket)")
        let script = #"""
            import sys, urllib.request, urllib.error
            for header in [None, "Bearer wrong", "Bearer scrape-s3cret"]:
                request = urllib.request.Request(sys.argv[1], headers={"Authorization": header} if header else {})
                try:
                    body = urllib.request.urlopen(request, timeout=10).read().decode()
                    print(200, "ambar_" in body)
                except urllib.error.HTTPError as e:
                    print(e.code, e.headers.get("WWW-Authenticate"))
            """#
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, url], timeout: 30)
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(result.output.split(separator: "\n").map(String.init), ["401 Bearer", "401 Bearer", "200 True"])
    }

    func testABadAddressIsRefusedBeforeAnythingStarts() throws {
        try initStore()
        let result = try agent(["hub", "--directory", directory.url.path, "--metrics", "nowhere"])
        XCTAssertEqual(result.status, 64)
        XCTAssertTrue(result.error.contains("--metrics takes unix:PATH, HOST:PORT"), result.error)
    }
}
