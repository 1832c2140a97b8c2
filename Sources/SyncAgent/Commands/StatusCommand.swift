import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation
import NIOPosix
import SharedStoreIPC

/// `sync-agent status`: the store and the hub, at a glance.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Show the store, its ledger and the hub.")

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var socket: SocketOptions

    @Flag(name: .long, help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        bootstrapLogging(level: .warning)
        let stack = try openExistingStack(directory)
        let report = try await Self.report(stack: stack, directory: directory, socketPath: socket.path(in: directory.url))
        if json {
            FileHandle.standardOutput.write(try report.jsonLine())
        } else {
            for line in report.lines { print(line) }
        }
    }

    /// How the report's own hub connection names itself; left out of the peers (the process that
    /// asks — `serve`, say — is listed under its sharing connection's name).
    static let statusProcessName = "sync-agent status"

    /// The report `status` prints (and `serve` answers at /v1/status).
    static func report(stack: DataStack, directory: DirectoryOptions, socketPath: String) async throws -> StatusReport {
        let coordinator = try stack.mainCoordinator
        let file = directory.storeFile
        let server = try coordinator.serverStatus()
        // try?: only sizes shown: a file that is not there is 0 bytes
        func size(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue ?? 0 }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "status")
        let entities = try stack.model.entityNames
        let counts: [String: Int] = try context.performAndWait { () throws(AmbarError) -> [String: Int] in
            var counts: [String: Int] = [:]
            for entity in entities {
                var request = FetchRequest<ManagedObject>(entityName: entity)
                request.includesSubentities = false
                counts[entity] = try context.count(for: request)
            }
            return counts
        }
        let history = try coordinator.historySummary()
        let head = history.headToken
        let cursors = try coordinator.historyCursors()
        let now = Date()
        var hub = StatusReport.Hub(socket: socketPath, reachable: false)
        if let uuid = UUID(uuidString: coordinator.storeIdentifier) {
            let loops = try AgentEventLoops.group(for: "asking the hub for its peers")
            let answer = Locked<[Frame.PeerEntry]?>(nil)
            let trustSource = server == nil ? file : URL(fileURLWithPath: socketPath).deletingLastPathComponent()
            let client: SyncClient?
            do {
                client = try await SyncClient.connect(
                    socketPath: socketPath,
                    hello: .init(storeUUID: uuid, processID: getpid(), instanceID: ProcessInstance.id, processName: statusProcessName, cursor: head),
                    // try?: an owner that cannot be read trusts fewer hubs (only this user's), never more
                    group: loops, trustedHub: (try? HubTrust(ownerOf: trustSource)) ?? .currentUser,
                    onFrame: { frame in if case .peers(let entries) = frame { answer.withLock { $0 = entries } } },
                    onClose: {})
            } catch SyncClient.ConnectError.untrustedHub(let reason) {
                hub.refused = reason
                client = nil
            } catch {
                client = nil  // nothing listens, or no answer: not reachable
            }
            if let client {
                try client.send(.peersRequest)
                // try?: a sleep throws only when cancelled, which ends the command
                for _ in 0..<200 where answer.withLock({ $0 == nil }) { try? await Task.sleep(for: .milliseconds(10)) }
                let peers = (answer.withLock { $0 } ?? []).filter { $0.processID != getpid() || $0.processName != statusProcessName }.map { peer in
                    // A process's default consumer name ends in its PID and instance.
                    let ledger = cursors.first { $0.consumer.hasSuffix("-\(peer.processID)-\(String(peer.instanceID, radix: 36))") }
                    return StatusReport.Peer(
                        pid: Int(peer.processID), instance: InstanceID.text(peer.instanceID), name: peer.processName,
                        connectCursor: peer.connectCursor, lastToken: peer.lastToken, ledgerCursor: ledger?.token)
                }
                hub = StatusReport.Hub(socket: socketPath, reachable: true, pid: Int(client.welcome.hubProcessID), peerCount: peers.count, peers: peers)
                await client.close()
            }
        }
        return StatusReport(
            store: directory.storeDisplay, backend: server?.backend ?? "sqlite",
            server: server.map {
                StatusReport.Server(location: $0.location, version: $0.version, listeners: $0.listeners, notificationQueueUsage: $0.notificationQueueUsage)
            },
            size: server == nil ? size(file.path) : nil, walSize: server == nil ? size(file.path + "-wal") : nil,
            uuid: coordinator.storeIdentifier, headToken: head, objects: counts, hub: hub,
            cursors: try cursors.map {
                let lag = try CursorLag(token: $0.token, head: head, coordinator, now: now)
                return StatusReport.Cursor(
                    consumer: $0.consumer, kind: $0.isDurable ? "consumer" : "process", token: $0.token,
                    lastSeen: ISO8601DateFormatter().string(from: $0.lastSeen),
                    ageSeconds: max(0, now.timeIntervalSince($0.lastSeen)), lagTokens: lag.tokens, lagSeconds: lag.seconds, expired: lag.expired)
            },
            history: StatusReport.History(
                oldestToken: history.oldestToken, headToken: history.headToken, transactions: history.transactions, purgedThrough: history.purgedThrough),
            inboxes: try StatusReport.Inbox.all(in: directory.url))
    }
}
