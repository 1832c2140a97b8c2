import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Filtered change streams (`/v1/changes?entity=E&where=FORMAT`): a client that applies the
/// events holds exactly what `fetch --predicate` returns at the head — the guide's Python client,
/// killed and started again and with `serve` restarted under it, and one that began with a
/// snapshot; and the filter's requests that are refused.
final class FilteredChangeStreamTests: AgentTestCase {
    /// The guide's client (ReactingToChanges.md), as written but for its port and query, in a
    /// directory of its own (where it keeps `state.json`).
    private func guideClient(port: Int, in folder: URL) throws -> URL {
        let guide = try String(contentsOf: Repository.url("Sources/SharedStoreIPC/Documentation.docc/ReactingToChanges.md"), encoding: .utf8)
        let intro = try XCTUnwrap(guide.range(of: "A client in Python's standard library that keeps a dict equal to a query"))
        let start = try XCTUnwrap(guide.range(of: "```python\n", range: intro.upperBound..<guide.endIndex))
        let end = try XCTUnwrap(guide.range(of: "\n```", range: start.upperBound..<guide.endIndex))
        let query = #"{"entity": "Reading", "where": "celsius > 35", "snapshot": "true"}"#
        let text = String(guide[start.upperBound..<end.lowerBound])
        XCTAssertTrue(text.contains(query) && text.contains("8080"), "the guide's client names its query and port as this test expects")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = folder.appendingPathComponent("client.py")
        try text.replacingOccurrences(of: "8080", with: String(port))
            .replacingOccurrences(of: query, with: #"{"entity": "Item", "where": "value > 35", "snapshot": "true"}"#)
            .write(to: script, atomically: true, encoding: .utf8)
        return script
    }

    private func startClient(_ script: URL) throws -> Process {
        let folder = script.deletingLastPathComponent()
        return try startAgent(
            ["python"], executable: URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", "cd '\(folder.path)' && exec python3 -u client.py"],
            log: folder.appendingPathComponent("client-\(UUID().uuidString.prefix(4)).log"))
    }

    /// What a client's `state.json` holds: its position and its objects by URI.
    private func state(of folder: URL) -> (position: Int64?, objects: [String: [String: Any]])? {
        guard let data = try? Data(contentsOf: folder.appendingPathComponent("state.json")),
            let state = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let objects = state["objects"] as? [String: [String: Any]]
        else { return nil }
        return ((state["position"] as? String).flatMap { Int64($0) }, objects)
    }

    /// `fetch --json` of the query, by URI.
    private func fetched(_ predicate: String) throws -> [String: [String: Any]] {
        let result = try agent(["fetch", "--directory", directory.url.path, "--entity", "Item", "--predicate", predicate, "--json"])
        XCTAssertEqual(result.status, 0, result.error)
        var objects: [String: [String: Any]] = [:]
        for line in result.output.split(separator: "\n") {
            let object = try json(String(line))
            objects[try XCTUnwrap(object["id"] as? String)] = object
        }
        return objects
    }

    private func assertHolds(_ folder: URL, head: Int64, _ expected: [String: [String: Any]], _ who: String, file: StaticString = #filePath, line: UInt = #line)
    {
        var held: (position: Int64?, objects: [String: [String: Any]])?
        let caughtUp = eventually(timeout: 60) {
            held = self.state(of: folder)
            return (held?.position ?? -1) >= head
        }
        XCTAssertTrue(caughtUp, "\(who) reached \(String(describing: held?.position)), not the head \(head)", file: file, line: line)
        let got = held?.objects ?? [:]
        XCTAssertEqual(Set(got.keys), Set(expected.keys), "\(who) holds the query's objects", file: file, line: line)
        for (uri, object) in expected {
            XCTAssertEqual(got[uri].map { NSDictionary(dictionary: $0) }, NSDictionary(dictionary: object), "\(who): \(uri)", file: file, line: line)
        }
    }

    func testTheGuidesClientHoldsTheQueryAcrossItsRestartsAndServes() throws {
        try initStore()
        var (serve, port, _) = try startServe(["--listen", "127.0.0.1:0"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        let writer = try Peer("writer", directory: directory, store: store)
        defer { writer.kill() }
        var generator = SystemRandomNumberGenerator()
        var uids: [String] = []
        var next = 0
        @discardableResult
        func write() throws -> Int64 {
            let command: String
            let roll = Int.random(in: 0..<10, using: &generator)
            if uids.isEmpty || roll < 4 {
                uids.append("u\(next)")
                next += 1
                command = "insert \(uids.last!) \(Int.random(in: 0...60, using: &generator))"
            } else if roll < 8 {
                command = "update \(uids.randomElement(using: &generator)!) \(Int.random(in: 0...60, using: &generator))"
            } else {
                command = "delete \(uids.remove(at: Int.random(in: 0..<uids.count, using: &generator)))"
            }
            try writer.post(command)
            let reply = try writer.receive(timeout: 30)
            XCTAssertTrue(reply.hasPrefix("ok "), "\(command): \(reply)")
            return Int64(reply.dropFirst(3)) ?? 0
        }
        for _ in 0..<30 { try write() }

        let first = directory.url.appendingPathComponent("first")
        var client = try startClient(try guideClient(port: port, in: first))
        defer { kill(client.processIdentifier, SIGKILL) }
        var token: Int64 = 0
        for _ in 0..<40 { token = try write() }
        // Killed once it follows (SIGKILL), started again: it goes on from the state it recorded.
        XCTAssertTrue(eventually(timeout: 60) { (self.state(of: first)?.position ?? -1) >= token }, "the first client follows")
        for _ in 0..<10 { try write() }
        kill(client.processIdentifier, SIGKILL)
        client.waitUntilExit()
        for _ in 0..<20 { try write() }
        client = try startClient(try guideClient(port: port, in: first))

        // A second client begins with a snapshot in the middle of it all.
        let second = directory.url.appendingPathComponent("second")
        let late = try startClient(try guideClient(port: port, in: second))
        defer { kill(late.processIdentifier, SIGKILL) }
        for _ in 0..<40 { token = try write() }
        XCTAssertTrue(eventually(timeout: 60) { (self.state(of: second)?.position ?? -1) >= token }, "the second client follows")

        // serve restarted on the same port: both reconnect and resume.
        kill(serve.processIdentifier, SIGTERM)
        serve.waitUntilExit()
        XCTAssertEqual(serve.terminationStatus, 0)
        for _ in 0..<20 { try write() }
        (serve, port, _) = try startServe(["--listen", "127.0.0.1:\(port)"])
        var head: Int64 = 0
        for _ in 0..<40 { head = try write() }

        let expected = try fetched("value > 35")
        XCTAssertFalse(expected.isEmpty, "the query selects something")
        assertHolds(first, head: head, expected, "the client killed and started again")
        assertHolds(second, head: head, expected, "the client that began with a snapshot")
    }

    /// A snapshot is every matching object, then the position it was read at (nothing is sent
    /// twice after it); the refusals say what is wrong.
    func testASnapshotEndsAtItsPositionAndBadFiltersAreRefused() throws {
        try initStore()
        let writer = try Peer("writer", directory: directory, store: store)
        defer { writer.kill() }
        var head: Int64 = 0
        for (uid, value) in [("a", 10), ("b", 40), ("c", 50)] {
            try writer.post("insert \(uid) \(value)")
            head = Int64(try writer.receive(timeout: 30).dropFirst(3)) ?? 0
        }
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        // Prints the status and each event as "EVENT ID DATA" until the first id that is a number.
        let reader = #"""
            import http.client, sys, urllib.parse
            port, query = int(sys.argv[1]), sys.argv[2]
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/v1/changes?" + query)
            r = conn.getresponse()
            print(r.status)
            if r.status != 200:
                print(r.read().decode("utf-8"))
                sys.exit(0)
            event, token, data = "message", None, ""
            while True:
                line = r.readline().decode("utf-8").rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("id:"):
                    token = line[3:].strip()
                elif line.startswith("data: "):
                    data = line[6:]
                elif line == "" and (token is not None or data):
                    print(event, token, data)
                    if token:
                        break
                    event, token, data = "message", None, ""
            """#
        func read(_ query: [(String, String)]) throws -> [String] {
            var components = URLComponents()
            components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
            let file = directory.url.appendingPathComponent("reader.py")
            try reader.write(to: file, atomically: true, encoding: .utf8)
            let result = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path, String(port), components.percentEncodedQuery ?? ""], timeout: 60)
            XCTAssertEqual(result.status, 0, result.error)
            return result.output.split(separator: "\n").map(String.init)
        }
        let snapshot = try read([("entity", "Item"), ("where", "value > 35"), ("snapshot", "true")])
        XCTAssertEqual(snapshot.count, 4, "status, reset, one upsert, the position: \(snapshot)")
        XCTAssertEqual(snapshot.first, "200")
        XCTAssertEqual(snapshot.dropFirst().first, "reset  {\"token\":\(head)}", "the reset has an empty id")
        let upsert = try XCTUnwrap(snapshot.dropFirst(2).first)
        XCTAssertTrue(upsert.hasPrefix("upsert None "), upsert)
        let objects = try XCTUnwrap(try json(String(upsert.dropFirst("upsert None ".count)))["objects"] as? [[String: Any]])
        XCTAssertEqual(Set(objects.compactMap { $0["uid"] as? String }), ["b", "c"])
        XCTAssertEqual(snapshot.last, "message \(head) ", "then its position alone")

        for (query, fragment) in [
            ([("where", "value > 1")], "comes before any entity="),
            ([("entity", "Nope")], "no entity named 'Nope'"),
            ([("entity", "Item"), ("entity", "Item")], "named twice"),
            ([("entity", "Item"), ("where", "value >")], "\"position\""),
            ([("entity", "Item"), ("where", "uid.count > 1")], "through a relationship"),
            ([("snapshot", "true")], "snapshot=true needs entity="),
            ([("entity", "Item"), ("snapshot", "yes")], "snapshot takes true or false"),
        ] {
            let lines = try read(query)
            XCTAssertEqual(lines.first, "400", "\(query): \(lines)")
            XCTAssertTrue(lines.dropFirst().joined().contains(fragment), "\(query): \(lines)")
        }

        // A snapshot of more objects than one read takes (500): every batch, then the position.
        let records = directory.url.appendingPathComponent("bulk.ndjson")
        try Data((0..<1_200).map { #"{"uid":"bulk-\#($0)","value":\#($0 % 100)}"# }.joined(separator: "\n").utf8).write(to: records)
        let imported = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", "--json", records.path])
        XCTAssertEqual(imported.status, 0, imported.error)
        let bulkHead = try XCTUnwrap(try XCTUnwrap(try json(imported.output)["tokens"] as? [Int]).max())
        let large = try read([("entity", "Item"), ("where", "value > 35"), ("snapshot", "true")])
        XCTAssertEqual(large.dropFirst().first, "reset  {\"token\":\(bulkHead)}")
        XCTAssertEqual(large.last, "message \(bulkHead) ")
        var uids: [String] = []
        for event in large.dropFirst(2).dropLast() {
            XCTAssertTrue(event.hasPrefix("upsert None "), event)
            let objects = try XCTUnwrap(try json(String(event.dropFirst("upsert None ".count)))["objects"] as? [[String: Any]])
            uids += objects.compactMap { $0["uid"] as? String }
        }
        let expected = ["b", "c"] + (0..<1_200).filter { $0 % 100 > 35 }.map { "bulk-\($0)" }
        XCTAssertEqual(uids.count, expected.count, "each matching object once")
        XCTAssertEqual(Set(uids), Set(expected))
    }

    /// A filter that cannot be decided for an object (a `MATCHES` that runs away) ends the
    /// stream with `event: error`, its position before the transaction; a stream that would meet
    /// it again is refused at once with a 422 naming it (an `EventSource` stops), where a 200
    /// ending at the same place made it reconnect every 2 s for ever.
    func testAFilterThatCannotBeDecidedEndsTheStreamAndTheSameStreamAgainIsA422() throws {
        try initStore()
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        let writer = try Peer("writer", directory: directory, store: store)
        defer { writer.kill() }
        // Follows the stream to its end and prints its events ("EVENT ID DATA"), then opens it
        // again from the last id and prints the status and body.
        let client = #"""
            import http.client, sys, urllib.parse
            port, target = int(sys.argv[1]), sys.argv[2]
            path = "/v1/changes?" + urllib.parse.urlencode([("entity", "Item"), ("where", 'uid MATCHES "(a+)+b"')])
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", path)
            r = conn.getresponse()
            assert r.status == 200, r.status
            event, token, data, last = "message", None, "", None
            while True:
                line = r.readline().decode("utf-8")
                if not line:
                    break
                line = line.rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("id:"):
                    token = line[3:].strip()
                elif line.startswith("data: "):
                    data = line[6:]
                elif line == "" and (token is not None or data):
                    print(event, token, data, flush=True)
                    if token is not None and token != "":
                        last = token
                        if int(token) >= 0:
                            open(target, "w").write(token)
                    event, token, data = "message", None, ""
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", path, headers={"Last-Event-ID": last})
            r = conn.getresponse()
            print("again", r.status, r.read().decode("utf-8"))
            """#
        let script = directory.url.appendingPathComponent("undecidable.py")
        try client.write(to: script, atomically: true, encoding: .utf8)
        let started = directory.url.appendingPathComponent("started")
        let run = try Thread.detached {
            try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/python3"), [script.path, String(port), started.path], timeout: 120)
        }
        XCTAssertTrue(eventually(timeout: 30) { FileManager.default.fileExists(atPath: started.path) }, "the stream began")
        try writer.post("insert ordinary 1")
        XCTAssertTrue(try writer.receive(timeout: 30).hasPrefix("ok "))
        // 40 a's and no b: without the bound, MATCHES would backtrack for days.
        try writer.post("insert \(String(repeating: "a", count: 40)) 2")
        let failing = try writer.receive(timeout: 30)
        XCTAssertTrue(failing.hasPrefix("ok "), failing)
        let token = String(failing.dropFirst(3))
        let result = try run.value()
        XCTAssertEqual(result.status, 0, result.error)
        let lines = result.output.split(separator: "\n").map(String.init)
        let error = try XCTUnwrap(lines.first { $0.hasPrefix("error ") }, result.output)
        XCTAssertTrue(error.contains("MATCHES gave up") && error.contains("\"token\":\(token)"), error)
        let events = lines.filter { !$0.hasPrefix("again ") }
        XCTAssertTrue(events.contains { $0.hasPrefix("remove \((Int(token) ?? 0) - 1) ") }, "the transaction before it was sent: \(result.output)")
        XCTAssertFalse(
            events.contains { $0.split(separator: " ").dropFirst().first == Substring(token) }, "the failing transaction's id was not sent: \(result.output)")
        let again = try XCTUnwrap(lines.last, result.output)
        XCTAssertTrue(again.hasPrefix("again 422 "), again)
        XCTAssertTrue(again.contains("\"token\":\(token)") && again.contains("MATCHES gave up"), again)
    }
}
