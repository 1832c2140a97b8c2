import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Under a low limit on open files (`prlimit --nofile`), every command either runs (and stops
/// cleanly on SIGTERM) or ends with a clear "Too many open files" error: never a crash (SIGILL
/// from an event loop or Dispatch that could not get a descriptor), never a misleading message.
final class DescriptorLimitTests: AgentTestCase {
    func testEveryCommandEndsClearlyOrRunsUnderALowDescriptorLimit() throws {
        try initStore()
        let file = directory.url.appendingPathComponent("items.ndjson")
        try #"{"uid":"a","value":1}"#.write(to: file, atomically: true, encoding: .utf8)
        let commands: [[String]] = [
            ["watch"], ["watch", "--consumer", "limits"], ["status"], ["hub"], ["fetch", "--entity", "Item"], ["history"], ["consumers"],
            ["serve", "--listen", "127.0.0.1:0"], ["import", "--entity", "Item", "--key", "uid", file.path],
            ["run", "--name", "limits", "--entity", "Item", "--key", "uid"],
        ]
        var outcomes: [String: Int] = [:]
        for command in commands {
            for limit in [6, 14, 22, 30, 46, 56, 72] {
                let name = "\(command[0])-\(limit)-\(outcomes.values.reduce(0, +))"
                let log = directory.url.appendingPathComponent("\(name).log")
                // A service (one that runs until stopped) says READY=1 on a notify socket once it
                // runs, as under systemd.
                let runsUntilStopped = ["watch", "hub", "serve", "run"].contains(command[0])
                let notify = runsUntilStopped ? try NotifySocket(path: directory.url.appendingPathComponent("\(name).sock").path) : nil
                // Through a wrapper that closes every descriptor but 0-2 (the test process has many
                // open, which a child would inherit): as from a shell.
                let process = try SpawnedProcess(
                    "/usr/bin/python3",
                    [
                        "-c", "import os, sys; os.closerange(3, 65536); os.execv(sys.argv[1], sys.argv[1:])", "/usr/bin/prlimit", "--nofile=\(limit):\(limit)",
                        agentBinary.path,
                    ]
                        + command + ["--directory", directory.url.path], log: log, environment: notify.map { ["NOTIFY_SOCKET": $0.path] } ?? [:])
                let text = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
                // Every command is given the time it takes (under ThreadSanitizer and load, more
                // than a few seconds) to end, or, for a service, to be ready.
                let deadline = Date().addingTimeInterval(120)
                var ready = false
                var status = process.waitForExit(timeout: 0)
                while status == nil, !ready, Date() < deadline {
                    if let notify {
                        ready = notify.receive(until: min(deadline, Date().addingTimeInterval(0.2)))?.contains("READY=1") == true
                    } else {
                        status = process.waitForExit(timeout: 0.2)
                    }
                    if status == nil { status = process.waitForExit(timeout: 0) }
                }
                // sync-agent needs 48 descriptors free at start (3 are inherited): every command
                // under 51 is refused before it does anything, every one from 51 gets to run.
                let refusedAtStart = limit < 51
                if let status {
                    let code = SpawnedProcess.exitCode(status)
                    XCTAssertNotNil(code, "\(command) under \(limit) descriptors was killed by signal \(status & 0x7f): \(text())")
                    XCTAssertEqual(
                        text().contains("Too many open files during starting sync-agent"), refusedAtStart,
                        "\(command) under \(limit) descriptors: \(text())")
                    if code != 0 {
                        XCTAssertTrue(text().contains("Too many open files"), "\(command) under \(limit) descriptors: \(text())")
                        outcomes["refused", default: 0] += 1
                    } else {
                        XCTAssertFalse(runsUntilStopped, "\(command) under \(limit) descriptors ended by itself before it was stopped: \(text())")
                        outcomes["finished", default: 0] += 1
                    }
                } else if ready {
                    XCTAssertFalse(refusedAtStart, "\(command) under \(limit) descriptors started: \(text())")
                    // Running: it must stop cleanly.
                    kill(process.processIdentifier, SIGTERM)
                    let stopped = process.waitForExit(timeout: 20)
                    XCTAssertEqual(stopped.flatMap(SpawnedProcess.exitCode), 0, "\(command) under \(limit) descriptors, stopped by SIGTERM: \(text())")
                    outcomes["ran", default: 0] += 1
                } else {
                    XCTFail("\(command) under \(limit) descriptors neither ended nor said READY=1 within 120 s: \(text())")
                }
            }
        }
        XCTAssertGreaterThan(outcomes["refused"] ?? 0, 10, "low limits were refused clearly: \(outcomes)")
        XCTAssertGreaterThan(outcomes["ran"] ?? 0, 5, "and higher ones ran: \(outcomes)")
    }
}
