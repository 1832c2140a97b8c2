import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A hub process that is frozen (SIGSTOP) still accepts connections — the kernel queues them —
/// but never answers. Commands started then must not hang on it: the handshake has a deadline,
/// the process follows the ledger meanwhile, and SIGTERM ends it within a few seconds.
final class FrozenHubTests: AgentTestCase {
    func testSIGTERMEndsAWatchPromptlyWhileTheHubIsFrozen() throws {
        let hub = try startFrozenHub()
        defer { kill(hub.processIdentifier, SIGCONT) }

        let output = Pipe()
        let log = directory.url.appendingPathComponent("watch.log")
        let watch = try startWatch(output: output, log: log)
        // The watcher gives up on the frozen hub at its handshake deadline, and says so.
        XCTAssertTrue(
            eventually(timeout: 15) { (try? String(contentsOf: log, encoding: .utf8))?.contains("did not answer") == true },
            "the watcher noticed the hub does not answer: \(String(describing: try? String(contentsOf: log, encoding: .utf8)))")
        // Meanwhile it follows the ledger: another process's import reaches it.
        let file = directory.url.appendingPathComponent("one.ndjson")
        try Data(#"{"uid":"while-frozen","value":1}"#.utf8).write(to: file)
        let imported = try agent(["import", "--directory", directory.url.path, "--entity", "Item", "--key", "uid", "--json", file.path])
        XCTAssertEqual(imported.status, 0, imported.error)
        let token = try XCTUnwrap((try json(imported.output)["tokens"] as? [Int])?.first)
        var reader = LineReader(output.fileHandleForReading)
        let line = try XCTUnwrap(reader.next(until: Date().addingTimeInterval(20)), "the watcher reported nothing while the hub was frozen")
        XCTAssertEqual(try json(Substring(line))["token"] as? Int, token)

        let seconds = try terminate(watch)
        print(String(format: "SIGTERM to exit with the hub frozen (after the handshake deadline): %.2f s", seconds))
        XCTAssertLessThan(seconds, 5, "SIGTERM ends the watcher within a few seconds although the hub is frozen")
        XCTAssertEqual(watch.terminationStatus, 0)
    }

    func testSIGTERMEndsAWatchThatIsStillWaitingForTheFrozenHub() throws {
        let hub = try startFrozenHub()
        defer { kill(hub.processIdentifier, SIGCONT) }
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        let log = directory.url.appendingPathComponent("watch.log")
        let watch = try startWatch(output: FileHandle.nullDevice, log: log, welcomeTimeout: 60)
        // Connected and waiting: the frozen hub's listening socket holds the watcher's connection
        // in its accept queue (the kernel's count, in /proc/net/unix, is the condition).
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ss") else {
            throw XCTSkip("/usr/bin/ss (iproute2) is not installed: it tells when the watcher's connection is queued on the frozen hub")
        }
        XCTAssertTrue(eventually(timeout: 15) { pendingConnections(on: socket) > 0 }, "the watcher connected to the frozen hub")
        let seconds = try terminate(watch)
        print(String(format: "SIGTERM to exit with the hub frozen (while waiting for welcome): %.2f s", seconds))
        XCTAssertLessThan(seconds, 5, "SIGTERM ends the wait for the frozen hub's welcome")
        XCTAssertEqual(watch.terminationStatus, 0)
    }

    /// Creates the store, starts `sync-agent hub`, waits until it answers, then SIGSTOPs it.
    private func startFrozenHub() throws -> Process {
        try initStore()
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        let hub = try startAgent(["hub", "--directory", directory.url.path])
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: socket) }, "the hub binds its socket")
        XCTAssertTrue(try eventually { try hubIsReachable() }, "the hub answers before it is frozen")
        kill(hub.processIdentifier, SIGSTOP)
        return hub
    }

    private func startWatch(output: Any, log: URL, welcomeTimeout: Int? = nil) throws -> Process {
        let timeout = welcomeTimeout.map { ["--welcome-timeout", "\($0)"] } ?? []
        return try startAgent(["watch", "--directory", directory.url.path, "--json"] + timeout, output: output, log: log)
    }

    /// Sends SIGTERM and returns the seconds until the process exited (at most 15: then it is
    /// killed and the test fails).
    private func terminate(_ process: Process) throws -> Double {
        let start = Date()
        kill(process.processIdentifier, SIGTERM)
        let exited = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            process.waitUntilExit()
            exited.signal()
        }
        guard exited.wait(timeout: .now() + 15) == .success else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            XCTFail("still running 15 s after SIGTERM")
            return 15
        }
        return Date().timeIntervalSince(start)
    }

    private func hubIsReachable() throws -> Bool {
        let facts = try json(try agent(["status", "--directory", directory.url.path, "--json"]).output)
        return (facts["hub"] as? [String: Any])?["reachable"] as? Bool == true
    }
}

/// Connections queued on the listening Unix socket bound at `path` and not yet accepted: the
/// Recv-Q column `ss -xln` shows for a listening socket.
func pendingConnections(on path: String) -> Int {
    guard let result = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/ss"), ["-xln"], timeout: 10) else { return 0 }
    for line in result.output.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        // Netid State Recv-Q Send-Q Local-Address Port Peer-Address Port
        guard fields.count >= 5, fields[4] == Substring(path), let queued = Int(fields[2]) else { continue }
        return queued
    }
    return 0
}
