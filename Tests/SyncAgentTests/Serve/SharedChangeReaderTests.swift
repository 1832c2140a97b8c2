import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `serve`'s one reader for every change stream: streams that keep up are sent what one read of
/// each transaction made (each distinct filter evaluated once), seen through `--metrics` and
/// by real clients; a client that stops reading is not cut off, but let go past its queue's
/// bytes, and on reading again gets every transaction once, in order, from the ledger on its
/// own, then joins the shared reader again.
final class SharedChangeReaderTests: AgentTestCase {
    /// A change-stream client (Python's standard library): reads `PATH` and writes each event to
    /// `OUT` as a JSON line (`id`, `event`, `data`) until an event's id reaches the token in the
    /// file `TARGET`. With `PAUSE`, it reads with a 4 KB receive buffer, and stops reading after
    /// its first event until the file `PAUSE` exists.
    private static let client = #"""
        import http.client, json, os, socket, sys, time
        port, path, target_file, out_file = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
        pause_file = sys.argv[5] if len(sys.argv) > 5 else None
        class Connection(http.client.HTTPConnection):
            def connect(self):
                self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                if pause_file:
                    self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                self.sock.settimeout(300)
                self.sock.connect((self.host, self.port))
        connection = Connection("127.0.0.1", port)
        connection.request("GET", path, headers={"Accept": "text/event-stream"})
        response = connection.getresponse()
        assert response.status == 200, response.status
        out = open(out_file, "w")
        event, first = {"id": None, "event": None, "data": None}, True
        def reached(token):
            return os.path.exists(target_file) and token is not None and token >= int(open(target_file).read())
        while True:
            line = response.readline().decode("utf-8")
            assert line, "the stream ended"
            line = line.rstrip("\n")
            if line.startswith(":"):
                continue
            if line.startswith("id: "):
                event["id"] = int(line[4:])
            elif line.startswith("event: "):
                event["event"] = line[7:]
            elif line.startswith("data: "):
                event["data"] = line[6:]
            elif line == "":
                if event == {"id": None, "event": None, "data": None}:
                    continue  # the end of a comment's event (a keep-alive): nothing to dispatch
                out.write(json.dumps(event) + "\n")
                out.flush()
                token, event = event["id"], {"id": None, "event": None, "data": None}
                if first and pause_file:
                    while not os.path.exists(pause_file):
                        time.sleep(0.05)
                first = False
                if reached(token):
                    break
        """#

    private struct Event: Equatable {
        let id: Int64?
        let event: String?
        let data: String?
    }

    private var clientScript: URL { directory.url.appendingPathComponent("client.py") }
    private var target: URL { directory.url.appendingPathComponent("target") }

    /// Starts a client of `path`, writing its events to a new file (returned).
    private func startClient(port: Int, path: String, pause: URL? = nil) throws -> (Process, events: URL) {
        if !FileManager.default.fileExists(atPath: clientScript.path) { try Self.client.write(to: clientScript, atomically: true, encoding: .utf8) }
        let events = directory.url.appendingPathComponent("events-\(UUID().uuidString.prefix(6)).jsonl")
        let arguments = [clientScript.path, String(port), path, target.path, events.path] + (pause.map { [$0.path] } ?? [])
        let process = try startAgent(
            ["python"], executable: URL(fileURLWithPath: "/usr/bin/python3"), arguments: ["-u"] + arguments,
            log: directory.url.appendingPathComponent("client-\(UUID().uuidString.prefix(4)).log"))
        return (process, events)
    }

    private func events(in file: URL) throws -> [Event] {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        // Only whole lines: the client may be writing the next one.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        if !text.hasSuffix("\n"), !lines.isEmpty { lines.removeLast() }
        return try lines.map { line in
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an event: \(line)")
            return Event(id: (object["id"] as? NSNumber)?.int64Value, event: object["event"] as? String, data: object["data"] as? String)
        }
    }

    /// Imports `rows` (`uid`, `value`) as one transaction.
    private func importRows(_ rows: [(uid: String, value: Int)], padding: Int = 0) throws {
        let file = directory.url.appendingPathComponent("rows-\(UUID().uuidString.prefix(6)).ndjson")
        let pad = String(repeating: "x", count: padding)
        try rows.map { #"{"uid":"\#($0.uid)\#(pad)","value":\#($0.value)}"# }.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let result = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", file.path], timeout: 300)
        XCTAssertEqual(result.status, 0, result.error)
    }

    /// The ledger's tokens after `start`, through `end`. (Serve's own maintenance may commit
    /// transactions beside the test's.)
    private func ledgerTokens(after start: Int64, through end: Int64) throws -> [Int64] {
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
        return try coordinator.history(after: start, limit: 1_000_000).map(\.token).filter { $0 <= end }
    }

    private func head() throws -> Int64 {
        try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store)).currentHistoryToken()
    }

    /// Waits for `process` to exit, failing the test (and killing it) when it does not in time.
    private func waitForExit(_ process: Process, _ who: String, timeout: TimeInterval = 120, file: StaticString = #filePath, line: UInt = #line) {
        if !eventually(timeout: timeout, { !process.isRunning }) {
            XCTFail("\(who) did not end within \(Int(timeout)) s", file: file, line: line)
            process.terminate()
        } else {
            XCTAssertEqual(process.terminationStatus, 0, "\(who) failed", file: file, line: line)
        }
    }

    private func counter(_ samples: [MetricSample], _ name: String, _ labels: [String: String] = [:]) -> Double {
        value(samples, name + "_total", labels) ?? value(samples, name, labels) ?? 0
    }

    func testStreamsThatKeepUpAreSentWhatOneReadMadeOncePerFilter() throws {
        try initStore()
        let metrics = "unix:" + directory.url.appendingPathComponent("metrics.sock").path
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0", "--metrics", metrics])
        defer { kill(serve.processIdentifier, SIGTERM) }
        let above = "/v1/changes?entity=Item&where=value%20%3E%2050"
        let below = "/v1/changes?entity=Item&where=value%20%3C%3D%2050"
        var clients: [(path: String, process: Process, events: URL)] = []
        for path in ["/v1/changes", above, below] {
            for _ in 0..<8 {
                let (process, events) = try startClient(port: port, path: path)
                clients.append((path, process, events))
            }
        }
        let start = try head()
        XCTAssertTrue(eventually(timeout: 60) { clients.allSatisfy { ((try? self.events(in: $0.events)) ?? []).count >= 1 } }, "every client has its position")

        var generator = SystemRandomNumberGenerator()
        for round in 0..<15 {
            try importRows(
                (0..<10).map { _ in (uid: "k\(Int.random(in: 0..<40, using: &generator))", value: Int.random(in: 0...100, using: &generator)) }
                    .reduce(into: [(uid: String, value: Int)]()) { rows, row in if !rows.contains(where: { $0.uid == row.uid }) { rows.append(row) } })
            if round == 7 { try importRows([(uid: "k0", value: 51), (uid: "k1", value: 50)]) }
        }
        let last = try head()
        try String(last).write(to: target, atomically: true, encoding: .utf8)
        for (index, client) in clients.enumerated() { waitForExit(client.process, "client \(index) of \(client.path)") }

        // Each client stops at the first event at or past the head; one may have been sent one
        // more before it stopped (serve's own maintenance commits beside the test's), so each is
        // compared through that event.
        func throughHead(_ events: [Event]) -> [Event] {
            guard let end = events.firstIndex(where: { ($0.id ?? -1) >= last }) else { return events }
            return Array(events[...end])
        }
        let streams = try clients.map { throughHead(try events(in: $0.events)) }
        let final = try XCTUnwrap(streams[0].last?.id)
        XCTAssertGreaterThanOrEqual(final, last, "followed to the head")
        let ledger = try ledgerTokens(after: start, through: final)
        for path in ["/v1/changes", above, below] {
            let group = clients.indices.filter { clients[$0].path == path }.map { streams[$0] }
            XCTAssertEqual(group.first?.last?.id, final, "\(path): followed to the same position")
            for (index, other) in group.enumerated().dropFirst() {
                XCTAssertEqual(other, group[0], "\(path): client \(index) was sent the same events, byte for byte, as client 0")
            }
            if path == "/v1/changes" {
                XCTAssertEqual(group[0].dropFirst().compactMap(\.id), ledger, "every transaction once, in order")
            }
        }
        // Applied in order, the filtered events hold what fetch returns.
        for (path, predicate) in [(above, "value > 50"), (below, "value <= 50")] {
            var held: Set<String> = []
            for event in try events(in: try XCTUnwrap(clients.first { $0.path == path }).events) {
                guard let data = event.data, let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else { continue }
                if event.event == "upsert" { for item in object["objects"] as? [[String: Any]] ?? [] { held.insert(item["id"] as? String ?? "") } }
                if event.event == "remove" { for id in object["ids"] as? [String] ?? [] { held.remove(id) } }
            }
            let fetched = try agent(["fetch", "--directory", directory.url.path, "--entity", "Item", "--predicate", predicate, "--json"])
            let expected = Set(try fetched.output.split(separator: "\n").map { try json($0)["id"] as? String ?? "" })
            XCTAssertEqual(held, expected, "\(path) holds what fetch --predicate '\(predicate)' returns")
        }

        let samples = try scrape(metrics)
        let shared = counter(samples, "ambar_serve_stream_pages", ["reader": "shared"])
        XCTAssertGreaterThanOrEqual(shared, 1, "the shared reader read the transactions")
        XCTAssertEqual(counter(samples, "ambar_serve_stream_pages", ["reader": "own"]), 0, "no stream read the ledger on its own")
        XCTAssertEqual(
            counter(samples, "ambar_serve_stream_encodings"), 3 * shared,
            "each page was made once for the unfiltered streams and once for each of the two filters, not once per stream (24)")
    }

    func testAClientThatStopsReadingIsLetGoNotCutOffAndCatchesUpThenJoinsAgain() throws {
        try initStore()
        let metrics = "unix:" + directory.url.appendingPathComponent("metrics.sock").path
        let (serve, port, log) = try startServe(["--listen", "127.0.0.1:0", "--stream-queue", "65536", "--metrics", metrics])
        defer { kill(serve.processIdentifier, SIGTERM) }
        let pause = directory.url.appendingPathComponent("read-again")
        let slow = try startClient(port: port, path: "/v1/changes", pause: pause)
        let fast = try startClient(port: port, path: "/v1/changes")
        let start = try head()
        XCTAssertTrue(
            eventually(timeout: 60) { [slow, fast].allSatisfy { ((try? self.events(in: $0.events)) ?? []).count >= 1 } }, "both clients have their position")

        // Transactions with many objects each, far more than the socket buffers and the queue hold.
        for batch in 0..<40 { try importRows((0..<1_000).map { (uid: "b\(batch)-\($0)-", value: $0) }, padding: 400) }
        let logText = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        XCTAssertTrue(
            try eventually(timeout: 120) { self.counter(try self.scrape(metrics), "ambar_serve_streams_detached") >= 1 },
            "the shared reader let the client that stopped reading go: \(logText())")
        XCTAssertTrue(logText().contains("reads the ledger on its own"), logText())
        XCTAssertTrue(serve.isRunning, "serve goes on")
        try Data().write(to: pause)
        let middle = try head()
        for (who, client) in [("the slow client", slow), ("the fast client", fast)] {
            XCTAssertTrue(
                eventually(timeout: 300) { (((try? self.events(in: client.events)) ?? []).compactMap(\.id).last ?? 0) >= middle },
                "\(who) caught up to \(middle)")
        }
        let ownBefore = counter(try scrape(metrics), "ambar_serve_stream_pages", ["reader": "own"])
        XCTAssertGreaterThan(ownBefore, 0, "the client let go read the ledger on its own")

        // Caught up, both follow the shared reader again: later transactions cost no reads of their own.
        for value in 0..<3 { try importRows([(uid: "after-\(value)", value: value)]) }
        let last = try head()
        try String(last).write(to: target, atomically: true, encoding: .utf8)
        waitForExit(slow.0, "the slow client", timeout: 180)
        waitForExit(fast.0, "the fast client", timeout: 180)
        for (who, client) in [("the slow client", slow), ("the fast client", fast)] {
            let received = try events(in: client.events).dropFirst().compactMap(\.id)
            let ledger = try ledgerTokens(after: start, through: try XCTUnwrap(received.last))
            XCTAssertEqual(received, ledger, "\(who) got every transaction once, in order")
        }
        XCTAssertEqual(
            counter(try scrape(metrics), "ambar_serve_stream_pages", ["reader": "own"]), ownBefore,
            "once caught up, the client was sent what the shared reader read")
    }
}
