import AmbarSystemd
import AmbarTestSupport
import Foundation
import XCTest

/// The agent under a (test-owned) service manager: notifications on `$NOTIFY_SOCKET`, socket
/// activation through `systemd-socket-activate`, SIGHUP reloads and SIGTERM.
final class SystemdTests: AgentTestCase {
    func testHubUnderSocketActivationNotifiesInOrderReloadsAndStopsCleanly() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: activate) else { throw XCTSkip("\(activate) is not installed") }
        try initStore()
        let notify = try NotifySocket(path: directory.url.appendingPathComponent("notify.sock").path)
        let hubSocket = directory.url.appendingPathComponent("run/hub.sock").path
        try FileManager.default.createDirectory(atPath: directory.url.appendingPathComponent("run").path, withIntermediateDirectories: true)
        let config = directory.url.appendingPathComponent("hub.conf")
        try "log-level = info\n".write(to: config, atomically: true, encoding: .utf8)

        // Not Foundation's Process: systemd-socket-activate closes the descriptor Process watches.
        let hub = try SpawnedProcess(
            activate,
            [
                "-l", hubSocket, "--fdname=hub", "-E", "NOTIFY_SOCKET=\(notify.path)", "-E", "WATCHDOG_USEC=400000",
                agentBinary.path, "hub", "--directory", directory.url.path, "--socket", hubSocket, "--config", config.path,
            ], log: directory.url.appendingPathComponent("hub.log"))
        XCTAssertTrue(eventually { FileManager.default.fileExists(atPath: hubSocket) })

        // The first client's connection makes systemd-socket-activate exec the hub, which then serves it.
        var facts: [String: Any] = [:]
        XCTAssertTrue(
            try eventually {
                facts = try json(try agent(["status", "--directory", directory.url.path, "--socket", hubSocket, "--json"]).output)
                return (facts["hub"] as? [String: Any])?["reachable"] as? Bool == true
            })
        XCTAssertEqual((facts["hub"] as? [String: Any])?["pid"] as? Int, Int(hub.processIdentifier), "the activated hub runs in the exec'd process")

        var received: [String] = []
        func next(_ wanted: (String) -> Bool) -> String? {
            let deadline = Date().addingTimeInterval(15)
            while let message = notify.receive(until: deadline) {
                received.append(message)
                if wanted(message) { return message }
            }
            return nil
        }
        let ready = next { $0.contains("READY=1") }
        XCTAssertTrue(ready?.contains("STATUS=serving") == true, "READY=1 comes with a status: \(ready ?? "nothing")")
        XCTAssertNotNil(next { $0 == "WATCHDOG=1" })
        XCTAssertNotNil(next { $0 == "WATCHDOG=1" }, "keep-alives repeat")

        // A reload with a good file, then with a bad one: both end in READY=1.
        try "log-level = debug\nmax-peers = 8\n".write(to: config, atomically: true, encoding: .utf8)
        kill(hub.processIdentifier, SIGHUP)
        XCTAssertNotNil(next { $0 == "RELOADING=1" })
        XCTAssertTrue(next { $0.contains("READY=1") }?.contains("STATUS=serving") == true)
        try "bogus = 1\n".write(to: config, atomically: true, encoding: .utf8)
        kill(hub.processIdentifier, SIGHUP)
        XCTAssertNotNil(next { $0 == "RELOADING=1" })
        XCTAssertTrue(next { $0.contains("READY=1") }?.contains("reload failed") == true, "a bad file keeps the old configuration and says so")

        kill(hub.processIdentifier, SIGTERM)
        XCTAssertNotNil(next { $0 == "STOPPING=1" })
        let status = try XCTUnwrap(hub.waitForExit(timeout: 20), "the hub stops on SIGTERM")
        XCTAssertEqual(SpawnedProcess.exitCode(status), 0, "exit 0, not killed by a signal")
        XCTAssertTrue(FileManager.default.fileExists(atPath: hubSocket), "the activation socket belongs to systemd: never unlinked")

        // The order a service manager relies on.
        let kinds = received.compactMap { message -> String? in
            if message.contains("READY=1") { return "ready" }
            if message == "RELOADING=1" { return "reloading" }
            if message == "STOPPING=1" { return "stopping" }
            if message == "WATCHDOG=1" { return "watchdog" }
            return nil
        }
        XCTAssertEqual(kinds.first, "ready", "\(received)")
        XCTAssertEqual(kinds.last, "stopping", "\(received)")
        let firstWatchdog = try XCTUnwrap(kinds.firstIndex(of: "watchdog"))
        XCTAssertLessThan(try XCTUnwrap(kinds.firstIndex(of: "ready")), firstWatchdog)
    }

    func testAReloadFallsBackToTheCommandLineForASettingRemovedFromTheFile() throws {
        try initStore()
        let uuid = try XCTUnwrap(try json(try agent(["status", "--directory", directory.url.path, "--json"]).output)["uuid"] as? String)
        let config = directory.url.appendingPathComponent("hub.conf")
        try "max-peers = 1\n".write(to: config, atomically: true, encoding: .utf8)
        let hub = try startAgent(["hub", "--directory", directory.url.path, "--config", config.path])
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        func probe() throws -> String {
            try ProcessRunner.run(BuiltProducts.url("ambar-test-helper"), ["probe", socket, uuid]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        XCTAssertTrue(try eventually { try probe() == "welcome" })
        let peer = try Peer("peer", directory: directory, store: store)
        defer { peer.kill() }
        XCTAssertTrue(try peer.await("status") { $0.contains("connected=true") }.contains("connected=true"))
        XCTAssertEqual(try probe(), "refused tooManyPeers", "the file's max-peers = 1 is in force")
        try "# max-peers removed\n".write(to: config, atomically: true, encoding: .utf8)
        kill(hub.processIdentifier, SIGHUP)
        XCTAssertTrue(try eventually { try probe() == "welcome" }, "back to the default limit, not the previous file's")
        kill(hub.processIdentifier, SIGTERM)
        hub.waitUntilExit()
        XCTAssertEqual(hub.terminationStatus, 0)
    }

    func testJournalFieldNamesAreWhatJournaldKeeps() {
        XCTAssertEqual(JournalField.name(forMetadataKey: "token"), "AMBAR_TOKEN")
        XCTAssertEqual(JournalField.name(forMetadataKey: "peer"), "AMBAR_PEER")
        XCTAssertEqual(JournalField.name(forMetadataKey: "objectID"), "AMBAR_OBJECT_ID")
        XCTAssertEqual(JournalField.name(forMetadataKey: "hub-pid"), "AMBAR_HUB_PID")
        XCTAssertEqual(JournalField.name(forMetadataKey: "AMBAR_TOKEN"), "AMBAR_TOKEN")
        XCTAssertEqual(JournalField.name(forMetadataKey: "_private"), "AMBAR_PRIVATE")
        XCTAssertEqual(JournalField.name(forMetadataKey: "ünï"), "AMBAR_N")
        for key in ["token", "objectID", "x y", "9lives", String(repeating: "a", count: 100)] {
            let name = JournalField.name(forMetadataKey: key)
            XCTAssertTrue(name.count <= 64 && !name.hasPrefix("_") && name.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber || $0 == "_") }, name)
        }
    }

    func testPriorityFollowsSyslogLevels() {
        XCTAssertEqual(JournalLogHandler.priority(.critical), 2)
        XCTAssertEqual(JournalLogHandler.priority(.error), 3)
        XCTAssertEqual(JournalLogHandler.priority(.warning), 4)
        XCTAssertEqual(JournalLogHandler.priority(.notice), 5)
        XCTAssertEqual(JournalLogHandler.priority(.info), 6)
        XCTAssertEqual(JournalLogHandler.priority(.debug), 7)
    }

    func testWithoutAServiceManagerNothingIsActivatedOrArmed() throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment["NOTIFY_SOCKET"] == nil, environment["LISTEN_FDS"] == nil, environment["WATCHDOG_USEC"] == nil else {
            throw XCTSkip("the test runner itself runs under a service manager")
        }
        XCTAssertNil(try SocketActivation.listeningSocket(named: "hub"))
        XCTAssertNil(Watchdog.keepAliveInterval)
        XCTAssertFalse(ServiceNotifier.notify(.ready), "no NOTIFY_SOCKET: a no-op, not an error")
    }
}
