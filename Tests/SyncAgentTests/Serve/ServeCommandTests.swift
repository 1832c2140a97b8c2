import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `sync-agent serve`: the change stream read by a client in another language (Python's standard
/// library), disconnected and resumed by Last-Event-ID many times while another process writes;
/// objects and status over HTTP; the bearer token off loopback. (A client that stops reading:
/// `SharedChangeReaderTests`.)
final class ServeCommandTests: AgentTestCase {
    private func python(_ script: String, _ arguments: [String], timeout: TimeInterval = 120) throws -> (status: Int32, output: String, error: String) {
        try Self.python(script, arguments, in: directory.url, timeout: timeout)
    }

    private static func python(_ script: String, _ arguments: [String], in directory: URL, timeout: TimeInterval) throws -> (
        status: Int32, output: String, error: String
    ) {
        let file = directory.appendingPathComponent("client-\(UUID().uuidString.prefix(4)).py")
        try script.write(to: file, atomically: true, encoding: .utf8)
        return try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path] + arguments, timeout: timeout)
    }

    /// Reads /v1/changes, hanging up after a random number of events and reconnecting with
    /// Last-Event-ID, until the file `target` names a token it has passed; prints every id it got.
    static let resumingClient = #"""
        import http.client, os, random, sys, time
        port, target_file = int(sys.argv[1]), sys.argv[2]
        last, reconnects, seen = None, 0, []
        def done():
            return os.path.exists(target_file) and last is not None and last >= int(open(target_file).read())
        while True:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            headers = {"Accept": "text/event-stream"}
            if last is not None:
                headers["Last-Event-ID"] = str(last)
            conn.request("GET", "/v1/changes" if last is not None else "/v1/changes?after=0", headers=headers)
            response = conn.getresponse()
            assert response.status == 200, response.status
            assert response.getheader("Content-Type").startswith("text/event-stream")
            budget, event_id, data = random.randint(1, 40), None, None
            while budget > 0:
                line = response.readline().decode("utf-8")
                if not line:
                    break
                line = line.rstrip("\n")
                if line.startswith("id: "):
                    event_id = int(line[4:])
                elif line.startswith("data: "):
                    data = line[6:]
                elif line == "" and event_id is not None and data is None:
                    # The stream's first event: its position alone, nothing to handle.
                    assert last is None or event_id == last, (event_id, last)
                    last, event_id = event_id, None
                elif line == "" and event_id is not None:
                    seen.append(event_id)
                    last, event_id, data, budget = event_id, None, None, budget - 1
                    if done():
                        break
            conn.close()
            reconnects += 1
            if done():
                break
        print("reconnects", reconnects)
        print(" ".join(map(str, seen)))
        """#

    func testAPythonClientResumingByLastEventIDGetsEveryTokenOnceInOrder() throws {
        try initStore()
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0"])
        let writer = try Peer("writer", directory: directory, store: store)
        defer { writer.kill() }
        try writer.post("burst 800 w-")
        let target = directory.url.appendingPathComponent("target")
        let folder = directory.url
        let client = try Thread.detached {
            try Self.python(Self.resumingClient, [String(port), target.path], in: folder, timeout: 180)
        }
        XCTAssertTrue(try writer.receive(timeout: 120).hasPrefix("ok "))
        let coordinator = try PersistentStoreCoordinator(model: try itemModel(), store: .sqlite(store))
        let head = try coordinator.currentHistoryToken()
        try String(head).write(to: target, atomically: true, encoding: .utf8)
        let result = try client.value()
        XCTAssertEqual(result.status, 0, result.error)
        let lines = result.output.split(separator: "\n")
        let reconnects = Int(lines.first?.split(separator: " ").last ?? "") ?? 0
        XCTAssertGreaterThan(reconnects, 20, "resumed many times")
        let tokens = lines.last.map { $0.split(separator: " ").compactMap { Int64($0) } } ?? []
        let expected = try coordinator.history(after: 0).map(\.token).filter { $0 <= tokens.last ?? 0 }
        XCTAssertEqual(tokens, expected, "every ledger transaction once, in order, across \(reconnects) reconnects")
        XCTAssertGreaterThanOrEqual(tokens.last ?? 0, head)
        kill(serve.processIdentifier, SIGTERM)
        serve.waitUntilExit()
        XCTAssertEqual(serve.terminationStatus, 0, "SIGTERM ends the open streams and exits 0")
    }

    /// A stream's first event is its position alone (`id:` with no data), so a client dropped
    /// before the first transaction resumes from there and misses nothing committed since; a
    /// position whose history is purged is a 410 with the expiry's JSON, not a stream that ends
    /// (which `EventSource` would reopen at the same position for ever).
    func testAStreamStartsWithItsPositionAndAPurgedPositionIsGone() throws {
        try initStore()
        func importItem(_ uid: String) throws -> Int64 {
            let file = directory.url.appendingPathComponent("\(uid).ndjson")
            try #"{"uid":"\#(uid)","value":1}"#.write(to: file, atomically: true, encoding: .utf8)
            let result = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", "--json", file.path])
            XCTAssertEqual(result.status, 0, result.error)
            return Int64(try XCTUnwrap((try json(result.output)["tokens"] as? [Int])?.last))
        }
        let first = try importItem("a")
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        // Prints the status, then each event's id (and whether it has data), up to `count` events.
        let reader = #"""
            import http.client, sys
            port, count = int(sys.argv[1]), int(sys.argv[2])
            headers = {"Last-Event-ID": sys.argv[3]} if len(sys.argv) > 3 else {}
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/v1/changes", headers=headers)
            r = conn.getresponse()
            print(r.status)
            if r.status != 200:
                print(r.read().decode("utf-8"))
                sys.exit(0)
            event_id, data = None, None
            while count > 0:
                line = r.readline().decode("utf-8").rstrip("\n")
                if line.startswith("id: "):
                    event_id = line[4:]
                elif line.startswith("data: "):
                    data = line[6:]
                elif line == "" and event_id is not None:
                    print(event_id, "data" if data else "position")
                    event_id, data, count = None, None, count - 1
            """#
        var result = try python(reader, [String(port), "1"])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(result.output.split(separator: "\n").map(String.init), ["200", "\(first) position"], "a stream at the head says where it starts")

        // Dropped before any transaction; one is committed; resuming from that position gets it.
        let second = try importItem("b")
        result = try python(reader, [String(port), "2", "\(first)"])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(result.output.split(separator: "\n").map(String.init), ["200", "\(first) position", "\(second) data"])

        // Purged through the head: a position before it is gone; the head itself is not.
        let coordinator = try PersistentStoreCoordinator(model: try PersistentStoreCoordinator.storedModel(at: store), store: .sqlite(store))
        XCTAssertEqual(try coordinator.purgeHistory(through: second, lease: 0), second)
        result = try python(reader, [String(port), "1", "\(first)"])
        XCTAssertEqual(result.status, 0, result.error)
        let lines = result.output.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "410", result.output)
        let gone = try json(lines.dropFirst().joined())
        XCTAssertEqual(gone["after"] as? Int, Int(first))
        XCTAssertEqual(gone["purged_through"] as? Int, Int(second))
        XCTAssertEqual(gone["head_token"] as? Int, Int(second))
        XCTAssertNotNil(gone["error"] as? String)
        result = try python(reader, [String(port), "1", "\(second)"])
        XCTAssertEqual(result.output.split(separator: "\n").map(String.init), ["200", "\(second) position"])
    }

    /// The Python client of the guide (ReactingToChanges.md), run as it is written (only its
    /// port changed): it prints each transaction once, and killed (SIGKILL) and started again it
    /// goes on from the position it recorded, without repeating one.
    func testTheGuidesPythonClientResumesAcrossItsOwnRestarts() throws {
        try initStore()
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        let guide = try String(contentsOf: Repository.url("Sources/SharedStoreIPC/Documentation.docc/ReactingToChanges.md"), encoding: .utf8)
        let intro = try XCTUnwrap(guide.range(of: "A client in Python's standard library that resumes where it stopped"))
        let start = try XCTUnwrap(guide.range(of: "```python\n", range: intro.upperBound..<guide.endIndex))
        let end = try XCTUnwrap(guide.range(of: "\n```", range: start.upperBound..<guide.endIndex))
        let script = directory.url.appendingPathComponent("client.py")
        try String(guide[start.upperBound..<end.lowerBound]).replacingOccurrences(of: "8080", with: String(port))
            .write(to: script, atomically: true, encoding: .utf8)
        func importItem(_ uid: String) throws -> Int {
            let file = directory.url.appendingPathComponent("\(uid).ndjson")
            try #"{"uid":"\#(uid)","value":1}"#.write(to: file, atomically: true, encoding: .utf8)
            let result = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", "--json", file.path])
            XCTAssertEqual(result.status, 0, result.error)
            return try XCTUnwrap((try json(result.output)["tokens"] as? [Int])?.last)
        }
        // Runs the client (in the scratch directory, where it keeps `position`) until it has
        // printed `tokens` and recorded the last as its position, then kills it; what it printed.
        // (Killed between printing and recording, it would print that one again: at least once.)
        let position = directory.url.appendingPathComponent("position")
        func runClient(until tokens: [Int]) throws -> [Int] {
            let output = directory.url.appendingPathComponent("client-\(UUID().uuidString.prefix(4)).out")
            XCTAssertTrue(FileManager.default.createFile(atPath: output.path, contents: nil), "cannot create \(output.path)")
            let client = try startAgent(
                ["python"], executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", "cd '\(directory.url.path)' && exec python3 -u client.py"], output: try FileHandle(forWritingTo: output))
            var printed: [Int] = []
            let got = eventually(timeout: 30) {
                printed = ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
                    Int($0.split(separator: " ").first ?? "")
                }
                let recorded = (try? String(contentsOf: position, encoding: .utf8)) ?? ""
                return (Set(tokens).isSubset(of: Set(printed)) && recorded == String(tokens.last ?? 0)) || !client.isRunning
            }
            kill(client.processIdentifier, SIGKILL)
            client.waitUntilExit()
            XCTAssertTrue(got, "the client printed \(printed), not all of \(tokens)")
            return printed
        }
        let first = [try importItem("a"), try importItem("b")]
        XCTAssertEqual(try runClient(until: first), first)
        let second = [try importItem("c")]
        XCTAssertEqual(try runClient(until: second), second, "restarted, it goes on from its position: nothing again")
        XCTAssertEqual(try String(contentsOf: position, encoding: .utf8), String(second[0]))
    }

    /// Without a token, only requests sent to a loopback name (or an `--allowed-host`) are
    /// answered, and a page of another origin (unless `--allowed-origin` names it) is refused:
    /// what DNS rebinding would need, a page's request with the attacker's Host, gets a 403.
    func testWithoutATokenOnlyLoopbackHostsAndItsOwnOriginAreAnswered() throws {
        try initStore()
        let (serve, port, _) = try startServe([
            "--listen", "127.0.0.1:0", "--allowed-host", "dash.internal", "--allowed-origin", "http://dash.internal:3000",
        ])
        defer { kill(serve.processIdentifier, SIGTERM) }
        let script = #"""
            import http.client, sys
            port = int(sys.argv[1])
            def get(host, origin=None):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.putrequest("GET", "/v1/status", skip_host=True)
                conn.putheader("Host", host % port if "%d" in host else host)
                if origin:
                    conn.putheader("Origin", origin % port if "%d" in origin else origin)
                conn.endheaders()
                r = conn.getresponse()
                body = r.read().decode("utf-8")
                return r.status, body
            for host, origin in [
                ("127.0.0.1:%d", None), ("localhost:%d", None), ("[::1]:%d", None), ("LOCALHOST", None), ("dash.internal:8080", None),
                ("attacker.example:%d", None), ("127.attacker.example:%d", None), ("localhost.attacker.example", None),
                ("127.0.0.1:%d", "http://127.0.0.1:%d"), ("127.0.0.1:%d", "http://attacker.example"), ("127.0.0.1:%d", "null"),
                ("127.0.0.1:%d", "http://dash.internal:3000"), ("127.0.0.1:%d", "http://dash.internal:3001"),
            ]:
                status, body = get(host, origin)
                print(status, "allowed" if "--allowed-" in body else "")
            """#
        let result = try python(script, [String(port)])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(
            result.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) },
            [
                "200", "200", "200", "200", "200",
                "403 allowed", "403 allowed", "403 allowed",
                "200", "403 allowed", "403 allowed",
                "200", "403 allowed",
            ])
    }

    /// A predicate deeper than the store can evaluate (thousands of `OR`s exceed SQLite's
    /// expression depth) is the request's fault: `fetch` says so, and `/v1/objects` answers 400
    /// with the reason, not 500.
    func testAPredicateTooLargeForTheStoreIsTheRequestsFault() throws {
        try initStore()
        let predicate = (1...5_000).map { "value == \($0)" }.joined(separator: " OR ")
        let fetched = try agent(["fetch", "--directory", directory.url.path, "--entity", "Item", "--predicate", predicate])
        XCTAssertNotEqual(fetched.status, 0)
        XCTAssertTrue(fetched.error.contains("too large for the store"), fetched.error)
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        let script = #"""
            import http.client, json, sys, urllib.parse
            port = int(sys.argv[1])
            predicate = " OR ".join("value == %d" % i for i in range(1, 5001))
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/v1/objects/Item?" + urllib.parse.urlencode({"predicate": predicate}))
            r = conn.getresponse()
            print(r.status, "too large for the store" in json.loads(r.read())["error"])
            """#
        let result = try python(script, [String(port)])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(result.output.trimmingCharacters(in: .whitespacesAndNewlines), "400 True")
    }

    func testObjectsAndStatusAndABadFormatOverHTTP() throws {
        try initStore()
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        let file = directory.url.appendingPathComponent("items.ndjson")
        try (1...5).map { #"{"uid":"u\#($0)","value":\#($0 * 10)}"# }.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", file.path]).status, 0)
        let script = #"""
            import http.client, json, sys, urllib.parse
            port = int(sys.argv[1])
            def get(path):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", path)
                r = conn.getresponse()
                return r.status, r.read().decode("utf-8")
            status, body = get("/v1/objects/Item?" + urllib.parse.urlencode({"predicate": "value >= 20", "sort": "value:desc", "limit": "2"}))
            print(status, json.dumps([o["uid"] for o in json.loads(body)]))
            status, body = get("/v1/objects/Item?" + urllib.parse.urlencode({"predicate": "value >> 2"}))
            print(status, json.loads(body)["position"])
            status, body = get("/v1/objects/Nothing")
            print(status)
            status, body = get("/v1/status")
            print(status, json.loads(body)["history"]["head_token"], json.loads(body)["objects"]["Item"])
            """#
        let result = try python(script, [String(port)])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(result.output.split(separator: "\n").map(String.init), [#"200 ["u5", "u4"]"#, "400 7", "404", "200 1 5"])
    }

    /// Off loopback a token is required; on loopback with a token, it is checked: requests without
    /// it or with a wrong one get 401, and the refusals of one address are logged once a minute
    /// at most.
    func testOffLoopbackATokenIsRequiredAndChecked() throws {
        try initStore()
        let refused = try agent(["serve", "--directory", directory.url.path, "--listen", "0.0.0.0:0"], timeout: 20)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.error.contains("--token-file"), refused.error)

        let tokenFile = directory.url.appendingPathComponent("token")
        try "s3cret-token\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        let (serve, port, log) = try startServe(["--listen", "127.0.0.1:0", "--token-file", tokenFile.path])
        defer { kill(serve.processIdentifier, SIGTERM) }
        let script = #"""
            import http.client, sys
            port = int(sys.argv[1])
            for header in [None, "Bearer wrong-token", "Bearer s3cret-token"]:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", "/v1/status", headers={"Authorization": header} if header else {})
                r = conn.getresponse()
                print(r.status, r.getheader("WWW-Authenticate"))
            # With a token the Host is not checked: a server behind a name answers by the token.
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.putrequest("GET", "/v1/status", skip_host=True)
            conn.putheader("Host", "ambar.example.com")
            conn.putheader("Authorization", "Bearer s3cret-token")
            conn.endheaders()
            print(conn.getresponse().status, "by name")
            statuses = set()
            for i in range(50):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", "/v1/objects/Item", headers={"Authorization": "Bearer guess-%d" % i})
                statuses.add(conn.getresponse().status)
            print(sorted(statuses))
            """#
        let result = try python(script, [String(port)])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(result.output.split(separator: "\n").map(String.init), ["401 Bearer", "401 Bearer", "200 None", "200 by name", "[401]"])
        let text = try String(contentsOf: log, encoding: .utf8)
        // 52 refusals from one address within a minute: logged once, not 52 times.
        XCTAssertEqual(text.components(separatedBy: "refused a request without a valid bearer token").count - 1, 1, text)
        XCTAssertFalse(text.contains("wrong-token") || text.contains("s3cret"), "tokens are never logged")
    }

    /// Only numeric loopback addresses and `localhost` go without a token: a name that looks like
    /// loopback (`127.attacker.example` resolves wherever its owner points it), a wildcard or an
    /// address that merely starts like one is refused at once, before anything listens.
    func testOnlyNumericLoopbackAndLocalhostGoWithoutAToken() throws {
        try initStore()
        for host in ["127.attacker.example", "127.0.0.1.nip.io", "localhost.attacker.example", "0.0.0.0", "[::]", "[::2]", "128.0.0.1"] {
            let refused = try agent(["serve", "--directory", directory.url.path, "--listen", "\(host):0"], timeout: 20)
            XCTAssertNotEqual(refused.status, 0, host)
            XCTAssertTrue(refused.error.contains("is reachable from other machines") && refused.error.contains("--token-file"), "\(host): \(refused.error)")
        }
        for host in ["127.0.0.1", "127.1.2.3", "[::1]", "localhost"] {
            let (serve, port, _) = try startServe(["--listen", "\(host):0"])
            defer { kill(serve.processIdentifier, SIGTERM) }
            XCTAssertGreaterThan(port, 0, host)
        }
    }

    /// With a certificate and its key it serves HTTPS: a client that trusts the certificate reads
    /// status and the change stream; a plain-HTTP request gets no answer; TLS 1.0 and 1.1 are
    /// refused, 1.2 and 1.3 served; half a pair is refused.
    func testWithACertificateItServesHTTPS() throws {
        try initStore()
        let (cert, key) = (directory.url.appendingPathComponent("cert.pem"), directory.url.appendingPathComponent("key.pem"))
        let made = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key.path, "-out", cert.path, "-days", "1",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ], timeout: 60)
        XCTAssertEqual(made.status, 0, "openssl (scripts/install-deps --tests installs it): \(made.error)")
        let half = try agent(["serve", "--directory", directory.url.path, "--listen", "127.0.0.1:0", "--tls-certificate", cert.path], timeout: 20)
        XCTAssertNotEqual(half.status, 0)
        XCTAssertTrue(half.error.contains("--tls-key"), half.error)

        let (serve, port, log) = try startServe(["--listen", "127.0.0.1:0", "--tls-certificate", cert.path, "--tls-key", key.path])
        defer { kill(serve.processIdentifier, SIGTERM) }
        XCTAssertTrue(try String(contentsOf: log, encoding: .utf8).contains("(HTTPS)"))
        let file = directory.url.appendingPathComponent("items.ndjson")
        try #"{"uid":"u1","value":1}"#.write(to: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", file.path]).status, 0)
        let script = #"""
            import http.client, json, ssl, sys
            port, cafile = int(sys.argv[1]), sys.argv[2]
            context = ssl.create_default_context(cafile=cafile)
            conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
            conn.request("GET", "/v1/status")
            r = conn.getresponse()
            print(r.status, json.loads(r.read())["objects"]["Item"])
            conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
            conn.request("GET", "/v1/changes?after=0")
            r = conn.getresponse()
            ids = []
            while len(ids) < 1:
                line = r.fp.readline().decode().strip()
                if line.startswith("id:"):
                    ids.append(line[3:].strip())
            print(r.status, r.getheader("Content-Type"), all(i.isdigit() for i in ids))
            plain = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                plain.request("GET", "/v1/status")
                print("plain", plain.getresponse().status)
            except Exception as e:
                print("plain refused")
            # Each protocol version alone; the client's own floor lowered (SECLEVEL=0), so that
            # only the server can refuse the old ones.
            for name in ["TLSv1", "TLSv1_1", "TLSv1_2", "TLSv1_3"]:
                version = getattr(ssl.TLSVersion, name)
                old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                old.load_verify_locations(cafile)
                old.set_ciphers("DEFAULT:@SECLEVEL=0")
                old.minimum_version = old.maximum_version = version
                try:
                    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=old)
                    conn.request("GET", "/v1/status")
                    print(name, conn.getresponse().status)
                except ssl.SSLError as e:
                    print(name, "refused")
            """#
        let result = try python(script, [String(port), cert.path])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(
            result.output.split(separator: "\n").map(String.init),
            [
                "200 1", "200 text/event-stream; charset=utf-8 True", "plain refused", "TLSv1 refused", "TLSv1_1 refused", "TLSv1_2 200",
                "TLSv1_3 200",
            ])
    }

    /// Socket-activated (systemd-socket-activate, as the .socket unit would): it serves the socket
    /// passed as `http`, says READY once it does, and STOPPING then exit 0 on SIGTERM.
    func testItServesTheSocketSystemdPassesAndSpeaksTypeNotify() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: activate) else { throw XCTSkip("\(activate) is not installed") }
        try initStore()
        let notify = try NotifySocket(path: directory.url.appendingPathComponent("notify.sock").path)
        let socketPath = directory.url.appendingPathComponent("http.sock").path
        // Not Foundation's Process: systemd-socket-activate closes the descriptor Process watches.
        let serve = try SpawnedProcess(
            activate,
            ["-l", socketPath, "--fdname=http", "-E", "NOTIFY_SOCKET=\(notify.path)", agentBinary.path, "serve", "--directory", directory.url.path],
            log: directory.url.appendingPathComponent("serve.log"))
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: socketPath) })
        // The first connection makes systemd-socket-activate exec serve, which then answers it.
        let script = #"""
            import http.client, json, socket, sys
            class Unix(http.client.HTTPConnection):
                def __init__(self, path):
                    super().__init__("localhost", timeout=30)
                    self.unix_path = path
                def connect(self):
                    self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    self.sock.connect(self.unix_path)
            conn = Unix(sys.argv[1])
            conn.request("GET", "/v1/status")
            r = conn.getresponse()
            print(r.status, json.loads(r.read())["backend"])
            """#
        let result = try python(script, [socketPath])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(result.output.trimmingCharacters(in: .whitespacesAndNewlines), "200 sqlite")
        var received: [String] = []
        func next(_ wanted: (String) -> Bool) -> String? {
            while let message = notify.receive(until: Date().addingTimeInterval(15)) {
                received.append(message)
                if wanted(message) { return message }
            }
            return nil
        }
        XCTAssertTrue(next { $0.contains("READY=1") }?.contains("STATUS=serving unix:") == true, "\(received)")
        kill(serve.processIdentifier, SIGTERM)
        XCTAssertNotNil(next { $0.contains("STOPPING=1") }, "\(received)")
        XCTAssertEqual(serve.waitForExit(timeout: 30).flatMap(SpawnedProcess.exitCode), 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: socketPath), "the socket belongs to the service manager: never unlinked")
    }
}

extension Thread {
    /// Runs `body` on a thread of its own; `value()` waits for its result.
    static func detached<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> DetachedResult<T> {
        let result = DetachedResult<T>()
        Thread.detachNewThread { result.set(Result { try body() }) }
        return result
    }
}

/// The result of ``Foundation/Thread/detached(_:)``.
final class DetachedResult<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) {
        result = value
        done.signal()
    }

    func value() throws -> T {
        done.wait()
        return try result!.get()
    }
}
