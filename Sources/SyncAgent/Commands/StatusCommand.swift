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

    /// The report `status` prints: the store's part, then the hub's answer to a `peers` request
    /// over a connection of its own.
    static func report(stack: DataStack, directory: DirectoryOptions, socketPath: String) async throws -> StatusReport {
        let store = try storeReport(stack: stack, directory: directory, socketPath: socketPath)
        return store.with(hub: try await askHub(store.hub, socketPath: socketPath))
    }

    /// What the store says, read on the caller's thread (`serve` calls it on its read pool), with
    /// the hub not yet asked.
    static func storeReport(stack: DataStack, directory: DirectoryOptions, socketPath: String) throws -> StoreStatus {
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
        let owners = Dictionary(try coordinator.consumerOwnerships().map { ($0.consumer, $0) }, uniquingKeysWith: { first, _ in first })
        let standbys = Dictionary(grouping: try coordinator.consumerStandbys(), by: \.consumer)
        let report = StatusReport(
            store: directory.storeDisplay, backend: server?.backend ?? "sqlite",
            server: server.map {
                StatusReport.Server(location: $0.location, version: $0.version, listeners: $0.listeners, notificationQueueUsage: $0.notificationQueueUsage)
            },
            size: server == nil ? size(file.path) : nil, walSize: server == nil ? size(file.path + "-wal") : nil,
            uuid: coordinator.storeIdentifier, headToken: head, objects: counts, hub: StatusReport.Hub(socket: socketPath, reachable: false),
            cursors: try cursors.map {
                let lag = try CursorLag(token: $0.token, head: head, coordinator, now: now)
                return StatusReport.Cursor(
                    consumer: $0.consumer, kind: $0.isDurable ? "consumer" : "process", token: $0.token,
                    lastSeen: ISO8601DateFormatter().string(from: $0.lastSeen),
                    ageSeconds: max(0, now.timeIntervalSince($0.lastSeen)), lagTokens: lag.tokens, lagSeconds: lag.seconds, expired: lag.expired,
                    active: $0.isDurable ? owners[$0.consumer].flatMap { $0.expires > now ? "\($0.owner)" : nil } : nil,
                    standingBy: $0.isDurable ? (standbys[$0.consumer] ?? []).map { "\($0.owner)" } : [])
            },
            history: StatusReport.History(
                oldestToken: history.oldestToken, headToken: history.headToken, transactions: history.transactions, purgedThrough: history.purgedThrough),
            inboxes: try StatusReport.Inbox.all(in: directory.url))
        return StoreStatus(report: report, hub: HubTarget(coordinator: coordinator, isServer: server != nil, file: file, socketPath: socketPath, head: head))
    }

    /// The hub of a store, as `status` asks it.
    struct HubTarget: Sendable {
        let storeUUID: UUID?
        /// Whose owner the hub's socket must belong to: the store's file's, or for a store on a
        /// server the socket's directory's.
        let trustSource: URL
        /// The position the asking connection gives in its hello.
        let head: Int64

        init(coordinator: PersistentStoreCoordinator, isServer: Bool, file: URL, socketPath: String, head: Int64) {
            storeUUID = UUID(uuidString: coordinator.storeIdentifier)
            trustSource = isServer ? URL(fileURLWithPath: socketPath).deletingLastPathComponent() : file
            self.head = head
        }
    }

    /// The store's part of a report, and the hub to ask for the rest.
    struct StoreStatus: Sendable {
        let report: StatusReport
        let hub: HubTarget

        /// The report with the hub's section made from `answer` (each peer's ledger position found
        /// among the report's cursors by its consumer name).
        func with(hub answer: HubAnswer) -> StatusReport {
            var report = self.report
            guard let pid = answer.pid else {
                report.hub.refused = answer.refused
                return report
            }
            let peers = answer.peers.map { peer in
                // A process's default consumer name ends in its PID and instance.
                let ledger = report.cursors.first { $0.consumer.hasSuffix("-\(peer.processID)-\(String(peer.instanceID, radix: 36))") }
                return StatusReport.Peer(
                    pid: Int(peer.processID), instance: InstanceID.text(peer.instanceID), name: peer.processName,
                    connectCursor: peer.connectCursor, lastToken: peer.lastToken, ledgerCursor: ledger?.token)
            }
            report.hub = StatusReport.Hub(socket: report.hub.socket, reachable: true, pid: pid, peerCount: peers.count, peers: peers)
            return report
        }
    }

    /// What the hub answered: its PID and peers (nil PID when nothing answered), or why the
    /// process on the socket was not taken for the hub.
    struct HubAnswer: Sendable {
        var pid: Int?
        var peers: [Frame.PeerEntry] = []
        var refused: String?
    }

    /// Asks the hub on `socketPath` for its peers, over a connection of its own (closed after;
    /// the answer is waited for up to 2 s). Its own connection is left out of the peers.
    static func askHub(_ hub: HubTarget, socketPath: String) async throws -> HubAnswer {
        guard let uuid = hub.storeUUID else { return HubAnswer() }
        let loops = try AgentEventLoops.group(for: "asking the hub for its peers")
        let answer = Locked<[Frame.PeerEntry]?>(nil)
        let client: SyncClient
        do {
            client = try await SyncClient.connect(
                socketPath: socketPath,
                hello: .init(storeUUID: uuid, processID: getpid(), instanceID: ProcessInstance.id, processName: statusProcessName, cursor: hub.head),
                // try?: an owner that cannot be read trusts fewer hubs (only this user's), never more
                group: loops, trustedHub: (try? HubTrust(ownerOf: hub.trustSource)) ?? .currentUser,
                onFrame: { frame in if case .peers(let entries) = frame { answer.withLock { $0 = entries } } },
                onClose: {})
        } catch SyncClient.ConnectError.untrustedHub(let reason) {
            return HubAnswer(refused: reason)
        } catch {
            return HubAnswer()  // nothing listens, or no answer: not reachable
        }
        try client.send(.peersRequest)
        // try?: a sleep throws only when cancelled, which ends the command
        for _ in 0..<200 where answer.withLock({ $0 == nil }) { try? await Task.sleep(for: .milliseconds(10)) }
        let peers = (answer.withLock { $0 } ?? []).filter { $0.processID != getpid() || $0.processName != statusProcessName }
        await client.close()
        return HubAnswer(pid: Int(client.welcome.hubProcessID), peers: peers)
    }
}
