import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `/v1/objects` pages: at most the default limit without one, a `Link: rel="next"` while more
/// remain, and following the links reads every object once, in the query's order; a cursor is
/// good only for its own query, and a limit over the maximum is refused.
final class ObjectsPagingTests: AgentTestCase {
    func testFollowingTheNextLinksReadsEveryObjectOnceInOrder() throws {
        try initStore()
        let file = directory.url.appendingPathComponent("items.ndjson")
        try (0..<1_005).map { #"{"uid":"u\#(String(format: "%04d", $0))","value":\#($0 % 7)}"# }.joined(separator: "\n")
            .write(to: file, atomically: true, encoding: .utf8)
        let imported = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", file.path])
        XCTAssertEqual(imported.status, 0, imported.error)
        let (serve, port, _) = try startServe(["--listen", "127.0.0.1:0"])
        defer { kill(serve.processIdentifier, SIGTERM) }
        // Prints, for each page, its status, how many objects and whether it links on; then every
        // uid read, in order. A path argument is read once, without following.
        let script = #"""
            import http.client, json, re, sys
            port, path, follow = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "follow"
            uids = []
            while path:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("GET", path)
                r = conn.getresponse()
                body = json.loads(r.read())
                link = r.getheader("Link")
                print(r.status, len(body) if r.status == 200 else body["error"], "next" if link else "end")
                if r.status != 200:
                    break
                uids += [o["uid"] for o in body]
                path = re.match(r'<([^>]+)>; rel="next"', link).group(1) if link and follow else None
            print(" ".join(uids))
            """#
        let scriptFile = directory.url.appendingPathComponent("pages.py")
        try script.write(to: scriptFile, atomically: true, encoding: .utf8)
        func pages(_ path: String, follow: Bool = true) throws -> [String] {
            let result = try ProcessRunner.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["python3", scriptFile.path, String(port), path, follow ? "follow" : "once"], timeout: 60)
            XCTAssertEqual(result.status, 0, result.error)
            return result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        let all = (0..<1_005).map { "u" + String(format: "%04d", $0) }

        var lines = try pages("/v1/objects/Item")
        XCTAssertEqual(Array(lines.prefix(2)), ["200 1000 next", "200 5 end"], "without a limit: pages of 1,000")
        XCTAssertEqual(lines[2].split(separator: " ").map(String.init), all, "every object once, in the order of their keys (the import's)")

        // Sorted by value, then uid: pages of 300 follow one order across their boundaries.
        lines = try pages("/v1/objects/Item?predicate=value%20%3E%3D%202&sort=value:desc,uid&limit=300")
        XCTAssertEqual(Array(lines.prefix(3)), ["200 300 next", "200 300 next", "200 117 end"])
        let expected = all.enumerated().filter { $0.offset % 7 >= 2 }.sorted { ($0.offset % 7, $1.element) > ($1.offset % 7, $0.element) }.map(\.element)
        XCTAssertEqual(lines[3].split(separator: " ").map(String.init), expected)

        // A cursor is good for its own query only; a limit over the maximum is refused.
        lines = try pages("/v1/objects/Item?limit=2", follow: false)
        XCTAssertEqual(lines.first, "200 2 next")
        let linked = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                "import http.client; c = http.client.HTTPConnection('127.0.0.1', \(port)); c.request('GET', '/v1/objects/Item?limit=2'); print(c.getresponse().getheader('Link'))",
            ],
            timeout: 30)
        let cursor = try XCTUnwrap(
            linked.output.range(of: #"cursor=[A-Za-z0-9_-]+"#, options: .regularExpression).map { String(linked.output[$0]) }, linked.output)
        XCTAssertEqual(try pages("/v1/objects/Item?limit=2&\(cursor)", follow: false).first, "200 2 next")
        XCTAssertTrue(
            try pages("/v1/objects/Item?limit=2&sort=value&\(cursor)", follow: false).first?.hasPrefix("400 this cursor was made for another query") ?? false)
        XCTAssertTrue(try pages("/v1/objects/Item?cursor=bm9wZQ", follow: false).first?.hasPrefix("400 cursor bm9wZQ is not one this server made") ?? false)
        XCTAssertTrue(try pages("/v1/objects/Item?limit=10001", follow: false).first?.hasPrefix("400 limit is at most 10000") ?? false)
    }
}
