import AmbarStack
import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SharedStoreIPC

/// `sync-agent watch`: keeps a main context live and prints every transaction merged into it.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each transaction of other processes as it is merged into a live main context.")

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var socket: SocketOptions

    @Flag(name: .long, help: "One JSON object per line: token, author, pid, instance, inserted, updated, deleted, latency_ms, history_expired.")
    var json = false

    func run() async throws {
        bootstrapLogging(level: .warning)
        let stack = try openExistingStack(directory)
        let configuration = socket.sharing(in: directory.url)
        let sync = try await SharedStoreSync.start(stack: stack, configuration: configuration)
        let asJSON = json
        let observation = sync.observeRemoteMerges { event in
            let uris = { (ids: Set<ManagedObjectID>) in ids.map(\.uriString).sorted() }
            if asJSON {
                JSONLine.print([
                    "token": event.token, "author": event.author ?? NSNull(), "pid": Int(event.processID),
                    "instance": event.instanceID == 0 ? NSNull() : InstanceID.text(event.instanceID),
                    "inserted": uris(event.inserted), "updated": uris(event.updated), "deleted": uris(event.deleted),
                    "latency_ms": event.latency * 1000, "history_expired": event.historyExpired,
                ])
            } else {
                let line =
                    event.historyExpired
                    ? "history expired: refreshed every object (now at token \(event.token))"
                    : "token \(event.token)  pid \(event.processID)  \(event.author ?? "-")  +\(event.inserted.count) ~\(event.updated.count) -\(event.deleted.count)  \(String(format: "%.2f", event.latency * 1000)) ms  \(uris(event.inserted + event.updated + event.deleted).prefix(5).joined(separator: " "))"
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
        }
        // Until SIGTERM or SIGINT (Ctrl-C), through swift-service-lifecycle.
        try await AgentService.run(logger: Logger(label: "ambar.agent.watch")) {
            try? await gracefulShutdown()
            observation.cancel()
            await sync.stop()
        }
    }
}

private func + (a: Set<ManagedObjectID>, b: Set<ManagedObjectID>) -> Set<ManagedObjectID> { a.union(b) }
