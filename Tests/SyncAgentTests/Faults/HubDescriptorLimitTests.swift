import AmbarStack
import AmbarTestSupport
import Foundation
import SharedStoreIPC
import XCTest

/// A hub at its descriptor limit with many silent connections waiting: it refuses what it cannot
/// take (through a descriptor kept in reserve, with an error frame) instead of retrying the failed
/// accept in a loop (the defect: about 90% of a core for as long as they waited), says so, and
/// serves the peers it admitted all along.
final class HubDescriptorLimitTests: AgentTestCase {
    /// CPU seconds (user and system) the process has used, from /proc.
    private func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The fields after the command name, which is in parentheses and may hold spaces.
        let fields = stat[stat.index(after: try XCTUnwrap(stat.lastIndex(of: ")")))...].split(separator: " ")
        let ticks = try XCTUnwrap(Double(fields[11])) + (try XCTUnwrap(Double(fields[12])))  // utime, stime
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func testAHubAtItsDescriptorLimitRefusesWhatItCannotTakeAndServesItsPeers() throws {
        try initStore()
        let socket = directory.url.appendingPathComponent(".ambar/sync.sock").path
        let log = directory.url.appendingPathComponent("hub.log")
        // Through a wrapper that closes every inherited descriptor but 0-2, under a limit of 64.
        // (SpawnedProcess, not Foundation's Process: the wrapper closes the descriptor Process
        // watches its children through.)
        let hub = try SpawnedProcess(
            "/usr/bin/python3",
            [
                "-c", "import os, sys; os.closerange(3, 65536); os.execv(sys.argv[1], sys.argv[1:])", "/usr/bin/prlimit", "--nofile=64:64",
                agentBinary.path, "hub", "--directory", directory.url.path,
            ], log: log)
        defer {
            kill(hub.processIdentifier, SIGKILL)
            _ = hub.waitForExit(timeout: 10)
        }
        // The socket's file appears at bind(), a moment before listen(): wait until a connection
        // is taken, not only until the file is there (under load, a connect in between was refused).
        let accepts = eventually {
            guard let probe = try? RawPeer(socket) else { return false }
            probe.close()
            return true
        }
        XCTAssertTrue(accepts, "the hub serves: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        guard accepts else { return }
        let pid = try XCTUnwrap(
            eventually {
                (try? String(contentsOfFile: "/proc/\(hub.processIdentifier)/comm", encoding: .utf8))?.hasPrefix("sync-agent") == true
            } ? hub.processIdentifier : nil, "the wrapper became the hub (exec)")

        // A refused connection says which one, whether the hub still runs, and what it logged.
        func connect(_ what: String) throws -> RawPeer {
            do {
                return try RawPeer(socket)
            } catch {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                XCTFail("connecting \(what) failed: \(error); the hub is \(hub.isRunning ? "running" : "gone"); its log: \(text.suffix(3000))")
                throw error
            }
        }

        let coordinator = try PersistentStoreCoordinator(model: try PersistentStoreCoordinator.storedModel(at: store), store: .sqlite(store))
        let uuid = try XCTUnwrap(UUID(uuidString: coordinator.storeIdentifier))
        let sender = try connect("the sender")
        let receiver = try connect("the receiver")
        defer { [sender, receiver].forEach { $0.close() } }
        for (n, peer) in [sender, receiver].enumerated() {
            try peer.write(try WireFormat.encode(.hello(.init(storeUUID: uuid, processID: Int32(9000 + n), instanceID: 1, processName: "peer", cursor: 0))))
            guard case .welcome? = try peer.readFrame() else { return XCTFail("peer \(n) was not admitted") }
        }

        // 100 connections that never say anything: far more than the hub has descriptors for.
        var silent: [RawPeer] = []
        defer { silent.forEach { $0.close() } }
        for n in 0..<100 { silent.append(try connect("silent connection \(n)")) }

        let before = try cpuSeconds(pid)
        let window = Date()
        // While they wait, the admitted peers are served: ten did-saves relayed one by one.
        for token in 1...10 {
            let save = Frame.DidSave(
                storeUUID: uuid, token: Int64(token), processID: 9000, instanceID: 1, author: nil, changes: ["Item": .init(inserted: [Int64(token)])])
            try sender.write(try WireFormat.encode(.didSave(save)))
            guard case .didSave(let relayed)? = try receiver.readFrame(timeout: 10) else { return XCTFail("save \(token) was not relayed") }
            XCTAssertEqual(relayed.token, Int64(token))
            Thread.sleep(forTimeInterval: 0.3)  // spreads the saves over the measured window; not a synchronisation
        }
        let elapsed = Date().timeIntervalSince(window)
        let used = try cpuSeconds(pid) - before
        XCTAssertLessThan(used / elapsed, 0.3, "the hub used \(used) s of CPU in \(elapsed) s with 100 connections waiting: it spins on accept")
        XCTAssertTrue(hub.isRunning)
        let text = try String(contentsOf: log, encoding: .utf8)
        XCTAssertFalse(text.contains("Fatal error"), text)
        XCTAssertTrue(text.contains("out of file descriptors"), "the hub said why it refused connections: \(text.suffix(2000))")
    }
}
