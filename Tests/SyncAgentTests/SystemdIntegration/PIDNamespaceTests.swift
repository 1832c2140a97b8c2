import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Processes in different PID namespaces (containers, `unshare --pid`, systemd's `PrivatePIDs=`)
/// can share a PID. Each process is told apart by its random instance ID, so a watcher that is
/// PID 1 of its namespace sees the transactions of an importer that is PID 1 of another.
final class PIDNamespaceTests: AgentTestCase {
    func testProcessesThatAreBothPID1SeeEachOther() throws {
        let unshare = "/usr/bin/unshare"
        guard FileManager.default.isExecutableFile(atPath: unshare) else { throw XCTSkip("\(unshare) (util-linux) is not installed") }
        let probe = try ProcessRunner.run(URL(fileURLWithPath: unshare), ["--pid", "--fork", "--kill-child", "/bin/sh", "-c", "echo $$"], timeout: 20)
        guard probe.status == 0, probe.output.trimmingCharacters(in: .whitespacesAndNewlines) == "1" else {
            throw XCTSkip(
                "cannot create a PID namespace here (unshare --pid: \(probe.error.trimmingCharacters(in: .whitespacesAndNewlines))); it needs root or user namespaces"
            )
        }
        try initStore()
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        // The watcher serves the hub itself (no daemon): both ends of every frame are PID 1.
        let output = Pipe()
        let watch = try startAgent(
            [], executable: URL(fileURLWithPath: unshare),
            arguments: [
                "--pid", "--fork", "--mount-proc", "--kill-child", agentBinary.path, "watch", "--directory", directory.url.path, "--json",
            ], output: output)
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: socket) }, "the watcher serves the hub")

        let file = directory.url.appendingPathComponent("items.ndjson")
        try Data(#"{"uid":"from-another-namespace","value":7}"#.utf8).write(to: file)
        let imported = try ProcessRunner.run(
            URL(fileURLWithPath: unshare),
            [
                "--pid", "--fork", "--mount-proc", "--kill-child", agentBinary.path, "import", "--directory", directory.url.path,
                "--entity", "Item", "--key", "uid", "--json", file.path,
            ], timeout: 60)
        XCTAssertEqual(imported.status, 0, imported.error)
        let token = try XCTUnwrap((try json(imported.output)["tokens"] as? [Int])?.first)
        let history = try agent(["history", "--directory", directory.url.path, "--after", "0", "--json"]).output.split(separator: "\n")
        XCTAssertEqual(try history.map(json).first { $0["token"] as? Int == token }?["pid"] as? Int, 1, "the importer was PID 1")

        var reader = LineReader(output.fileHandleForReading)
        let line = try XCTUnwrap(reader.next(until: Date().addingTimeInterval(20)), "the watcher (PID 1) never saw the importer's (PID 1) transaction")
        let event = try json(Substring(line))
        XCTAssertEqual(event["token"] as? Int, token)
        XCTAssertEqual(event["pid"] as? Int, 1)
        XCTAssertEqual((event["inserted"] as? [String])?.count, 1)
        XCTAssertNotEqual(event["instance"] as? String, nil, "the event names the importer's instance")
        withExtendedLifetime(watch) {}
    }
}
