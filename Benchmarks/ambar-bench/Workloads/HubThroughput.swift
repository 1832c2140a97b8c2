import AmbarStack
import Foundation
import SharedStoreIPC

/// Workload 7: did-save messages per second the hub relays to 8 receiver processes, and what
/// sharing adds to the publisher's save.
struct HubThroughput {
    let messages: Int
    let receivers: Int
    let saves: Int

    func run(into report: inout Report) async throws {
        let scratch = try ScratchDirectory("hub")
        defer { scratch.remove() }
        let stack = try DataStack.open(model: .model(try CrossProcessRoles.model()), storeURL: scratch.file("bench.sqlite"), name: "bench")
        let uuid = try storeUUID(try stack.writerCoordinator.storeIdentifier)

        // The hub alone: one client publishes did-save frames back to back.
        progress("hub: \(messages) did-save frames to \(receivers) receivers")
        let socket = scratch.file("hub.sock").path
        let hub = try await SyncHub.start(.init(socketPath: socket, storeUUID: uuid, storeFile: scratch.file("bench.sqlite")))
        let children = try (0..<receivers).map { _ in try ChildProcess(role: "hub-receiver", [socket, uuid.uuidString]) }
        for child in children { _ = child.line() }
        let publisher = try await SyncClient.connect(
            socketPath: socket, hello: .init(storeUUID: uuid, processID: getpid(), instanceID: ProcessInstance.id, processName: "publisher", cursor: 0),
            group: MultiThreadedEventLoopGroupHolder.shared, onFrame: { _ in }, onClose: {})
        let start = now()
        for i in 0..<messages {
            try publisher.send(
                .didSave(
                    .init(
                        storeUUID: uuid, token: Int64(i + 1), processID: getpid(), instanceID: ProcessInstance.id, author: nil,
                        changes: ["Stamp": .init(updated: [Int64(i % 100 + 1)])])))
        }
        let sent = now()
        try await waitFor(children, atLeast: messages, asking: "through")
        let relayed = Double(messages) / (Double(now() - start) / 1e9)
        let dropped = await hub.droppedFrameCount()
        let sendCost = Double(sent - start) / 1e3 / Double(messages)
        for child in children {
            _ = child.ask("quit")
            child.process.waitUntilExit()
        }
        await publisher.close()
        await hub.stop()

        // The publisher's save, with and without sharing (8 receivers connected).
        progress("hub: publisher cost per save, \(saves) saves")
        let alone = try saveTimes(stack: stack)
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(scratch.url))
        while !sync.isConnected { try await Task.sleep(nanoseconds: 10_000_000) }
        let listeners = try (0..<receivers).map { _ in try ChildProcess(role: "receiver", [scratch.url.path]) }
        for child in listeners { _ = child.line() }
        let shared = try saveTimes(stack: stack)
        for child in listeners {
            _ = child.ask("quit")
            child.process.waitUntilExit()
        }
        await sync.stop()

        report.results.append(
            WorkloadResult(
                number: 7, title: "Hub throughput",
                figures: [
                    Figure(approach: "hub relaying did-save frames to \(receivers) receiver processes", value: relayed, unit: "msg/s"),
                    Figure(approach: "publisher: sending one did-save frame", value: sendCost, unit: "µs"),
                    Figure(
                        approach: "publisher: one-object save with sharing, \(receivers) receivers (median)", value: median(shared), unit: "µs",
                        ratio: median(shared) / median(alone), ratioAgainst: "no sharing"),
                    Figure(approach: "publisher: the same save without sharing (median)", value: median(alone), unit: "µs"),
                ],
                target: "≥ 20,000 msg/s to \(receivers) receivers; a save with sharing ≤ 1.5× the same without",
                met: relayed >= 20_000 && median(shared) <= 1.5 * median(alone),
                note:
                    "messages/s = frames ÷ time from the first send until every receiver knew of the last one (from its frame, or from the token-only frame the hub sends a receiver whose backlog passed the hub's bound); frames dropped this run: \(dropped)"
            ))
    }

    /// Wall times (µs) of `saves` one-object update saves through an importer context.
    private func saveTimes(stack: DataStack) throws -> [Double] {
        let importer = try stack.importerContext()
        return try importer.performAndWait { () throws -> [Double] in
            let item = try importer.insertObject(entityName: "Stamp")
            try item.setValue("publisher-\(UUID().uuidString.prefix(8))", forKey: "uid")
            try importer.save()
            var times: [Double] = []
            for n in 0..<saves {
                try item.setValue(.integer(Int64(n)), forKey: "stamp")
                let start = now()
                try importer.save()
                times.append(Double(now() - start) / 1e3)
                usleep(500)
            }
            return times
        }
    }
}

/// A store identifier as a UUID (it always is one).
func storeUUID(_ text: String) throws -> UUID {
    guard let uuid = UUID(uuidString: text) else { throw BenchError("store identifier \(text) is not a UUID") }
    return uuid
}
