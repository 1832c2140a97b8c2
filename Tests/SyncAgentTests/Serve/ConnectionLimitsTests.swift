import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `serve`'s limits before any request is read: a client that sends its headers a byte at a time
/// is closed at the header timeout; connections past `--max-connections` are closed as they
/// open; a client that hangs up on a change stream frees its connection at once.
final class ConnectionLimitsTests: AgentTestCase {
    private func python(_ script: String, _ arguments: [String]) throws -> [String] {
        let file = directory.url.appendingPathComponent("client-\(UUID().uuidString.prefix(4)).py")
        try script.write(to: file, atomically: true, encoding: .utf8)
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", file.path] + arguments, timeout: 120)
        XCTAssertEqual(result.status, 0, result.error)
        return result.output.split(separator: "\n").map(String.init)
    }

    func testAClientThatSendsItsHeadersSlowlyIsClosed() throws {
        try initStore()
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0", "--header-timeout", "2"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        // Sends a request's head one byte every half second (about 80 s for all of it), and
        // prints how many bytes went before the server closed the connection, or "complete".
        let lines = try python(
            #"""
            import select, socket, sys
            head = b"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100 + b"\r\n\r\n"
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            # A close with a byte of ours unread reaches us as a reset: closed all the same.
            try:
                for sent in range(len(head)):
                    readable, _, _ = select.select([s], [], [], 0.5)
                    if readable and s.recv(1024) == b"":
                        print("closed after", sent)
                        break
                    s.send(head[sent:sent + 1])
                else:
                    print("complete")
            except (ConnectionResetError, BrokenPipeError):
                print("closed after", sent, "(reset)")
            """#, [String(port)])
        let words = try XCTUnwrap(lines.last).split(separator: " ")
        XCTAssertEqual(words.first, "closed", "the server closed a request whose head had not arrived: \(lines)")
    }

    func testConnectionsPastTheCapAreClosedAndAHangUpFreesItsConnection() throws {
        try initStore()
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0", "--max-connections", "2", "--header-timeout", "60"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        // Two idle connections fill the cap; a third is closed as it opens. One of the two opens
        // a change stream, reads its position and hangs up: a new request is answered once the
        // server has let it go (without the stream's next write, 15 s later).
        let lines = try python(
            #"""
            import http.client, socket, sys, time
            port = int(sys.argv[1])
            def answered(conn):
                conn.request("GET", "/v1/latency")
                r = conn.getresponse()
                r.read()
                return r.status
            # Each answers a request first, so both are open and counted before the third.
            idle = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            stream = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            assert answered(idle) == 200 and answered(stream) == 200
            third = socket.create_connection(("127.0.0.1", port))
            third.settimeout(30)
            print("third", "closed" if third.recv(1024) == b"" else "open")
            stream.request("GET", "/v1/changes")
            r = stream.getresponse()
            while not r.readline().startswith(b"id: "):
                pass
            print("stream", r.status)
            stream.sock.shutdown(socket.SHUT_RDWR)
            stream.close()
            deadline = time.time() + 10
            while True:
                try:
                    s = socket.create_connection(("127.0.0.1", port))
                    s.settimeout(30)
                    s.sendall(b"GET /v1/latency HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    answer = s.recv(4096)
                    s.close()
                except OSError:
                    answer = b""  # closed as it opened: the cap is still full
                if answer.startswith(b"HTTP/1.1 200"):
                    print("after the hang-up", "answered")
                    break
                if time.time() > deadline:
                    print("after the hang-up", "refused for 10 s")
                    break
                time.sleep(0.1)
            idle.close()
            """#, [String(port)])
        XCTAssertEqual(lines, ["third closed", "stream 200", "after the hang-up answered"])
    }

    func testStreamsPastTheCapAreAskedToComeBackLater() throws {
        try initStore()
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0", "--max-streams", "1"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        // One stream open (its position read); a second is a 503 with Retry-After; once the
        // first hangs up, a stream is taken again.
        let lines = try python(
            #"""
            import http.client, json, socket, sys, time
            port = int(sys.argv[1])
            def open_stream():
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("GET", "/v1/changes")
                return conn, conn.getresponse()
            first, r = open_stream()
            while not r.readline().startswith(b"id: "):
                pass
            print("first", r.status)
            second, r = open_stream()
            print("second", r.status, r.getheader("Retry-After"), "max-streams" in json.loads(r.read())["error"])
            second.close()
            first.sock.shutdown(socket.SHUT_RDWR)
            first.close()
            deadline = time.time() + 10
            while True:
                third, r = open_stream()
                if r.status == 200 or time.time() > deadline:
                    print("after the first hung up", r.status)
                    break
                r.read()
                third.close()
                time.sleep(0.1)
            """#, [String(port)])
        XCTAssertEqual(lines, ["first 200", "second 503 5 True", "after the first hung up 200"])
    }
}
