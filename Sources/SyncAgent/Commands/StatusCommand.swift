import AmbarStack
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
        let coordinator = try stack.mainCoordinator
        let file = directory.storeFile
        let server = try coordinator.serverStatus()
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
        let socketPath = socket.path(in: directory.url)
        var hub: [String: Any] = ["socket": socketPath, "reachable": false]
        if let uuid = UUID(uuidString: coordinator.storeIdentifier) {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let answer = Locked<[Frame.PeerEntry]?>(nil)
            if let client = try? await SyncClient.connect(
                socketPath: socketPath,
                hello: .init(storeUUID: uuid, processID: getpid(), instanceID: ProcessInstance.id, processName: "sync-agent status", cursor: head),
                group: group,
                onFrame: { frame in if case .peers(let entries) = frame { answer.withLock { $0 = entries } } },
                onClose: {})
            {
                try client.send(.peersRequest)
                for _ in 0..<200 where answer.withLock({ $0 == nil }) { try? await Task.sleep(for: .milliseconds(10)) }
                let peers = (answer.withLock { $0 } ?? []).filter { $0.processID != getpid() }.map { peer -> [String: Any] in
                    // A process's default consumer name ends in its PID and instance.
                    let ledger = cursors.first { $0.consumer.hasSuffix("-\(peer.processID)-\(String(peer.instanceID, radix: 36))") }
                    return [
                        "pid": Int(peer.processID), "instance": InstanceID.text(peer.instanceID), "name": peer.processName,
                        "connect_cursor": peer.connectCursor,
                        "last_token": peer.lastToken, "ledger_cursor": ledger.map { $0.token as Any } ?? NSNull(),
                    ]
                }
                hub = ["socket": socketPath, "reachable": true, "pid": Int(client.welcome.hubProcessID), "peer_count": peers.count, "peers": peers]
                await client.close()
            }
            try? await group.shutdownGracefully()
        }
        let consumers = cursors.map {
            [
                "consumer": $0.consumer, "token": $0.token, "last_seen": ISO8601DateFormatter().string(from: $0.lastSeen),
                "age_seconds": max(0, now.timeIntervalSince($0.lastSeen)),
            ] as [String: Any]
        }
        if json {
            var storeFields: [String: Any] = ["store": directory.storeDisplay, "backend": server?.backend ?? "sqlite"]
            if let server {
                storeFields["server"] =
                    [
                        "location": server.location, "version": server.version, "listeners": server.listeners,
                        "notification_queue_usage": server.notificationQueueUsage,
                    ] as [String: Any]
            } else {
                storeFields["size"] = size(file.path)
                storeFields["wal_size"] = size(file.path + "-wal")
            }
            JSONLine.print(
                storeFields.merging([
                    "uuid": coordinator.storeIdentifier, "head_token": head, "objects": counts, "hub": hub, "cursors": consumers,
                    "history": [
                        "oldest_token": history.oldestToken.map { $0 as Any } ?? NSNull(), "head_token": history.headToken,
                        "transactions": history.transactions, "purged_through": history.purgedThrough,
                    ] as [String: Any],
                ]) { a, _ in a })
            return
        }
        print("store      \(directory.storeDisplay)")
        if let server {
            print("backend    PostgreSQL \(server.version)")
            print("listeners  \(server.listeners) (one per host whose processes share the store)")
            print(String(format: "notify     queue %.1f%% used", server.notificationQueueUsage * 100))
        } else {
            print("backend    SQLite")
            print("size       \(size(file.path)) bytes (WAL \(size(file.path + "-wal")) bytes)")
        }
        print("uuid       \(coordinator.storeIdentifier)")
        print("head token \(head)")
        print(
            "ledger     \(history.transactions) transaction(s)\(history.oldestToken.map { ", oldest token \($0)" } ?? ""), purged through \(history.purgedThrough)"
        )
        for (entity, count) in counts.sorted(by: { $0.key < $1.key }) { print("objects    \(entity): \(count)") }
        if hub["reachable"] as? Bool == true {
            print("hub        \(socketPath): served by pid \(hub["pid"] ?? "?"), \(hub["peer_count"] ?? 0) peer(s)")
            for peer in hub["peers"] as? [[String: Any]] ?? [] {
                print(
                    "peer       pid \(peer["pid"] ?? "?") \(peer["name"] ?? "?"): last token \(peer["last_token"] ?? "?"), ledger cursor \(peer["ledger_cursor"] is NSNull ? "-" : "\(peer["ledger_cursor"] ?? "-")")"
                )
            }
        } else {
            print("hub        \(socketPath): not reachable (processes poll the ledger)")
        }
        for cursor in cursors {
            print("cursor     \(cursor.consumer) at \(cursor.token) (seen \(Int(max(0, now.timeIntervalSince(cursor.lastSeen)))) s ago)")
        }
    }
}
