import AmbarCore
import AmbarDataStack
import AmbarResults
import ArgumentParser
import Foundation
import SharedStoreIPC

/// `sync-agent demo-viewer`: one of the demo's viewer processes (started by `sync-agent demo`).
///
/// Keeps a fetched-results controller of every product on its main context, live through the
/// merges of other processes' saves, and records each merge's commit-to-merged latency. Driven
/// on standard input: `wait TOKEN` answers, once TOKEN is merged, with one JSON line holding the
/// digest of the controller's objects (what this process holds in memory) and the latencies.
struct DemoViewerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-viewer", abstract: "A demo viewer process (run by `sync-agent demo`).", shouldDisplay: false)

    @OptionGroup var directory: DirectoryOptions

    func run() async throws {
        bootstrapLogging(level: .warning)
        let stack = try openExistingStack(directory)
        let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory.url))
        let main = try stack.mainContext
        let results = ResultsBox()
        try await main.perform { () throws(AmbarError) in
            let controller = FetchedResultsController(
                fetchRequest: FetchRequest<ManagedObject>(entityName: DemoModel.entity, sortDescriptors: [Key<String>("sku").sorted()]),
                context: main)
            try controller.performFetch()
            results.controller = controller
        }
        let merged = Locked<(token: Int64, latencies: [Double], commits: [Double])>((0, [], []))
        let observation = sync.observeRemoteMerges { event in
            let mergedAt = Date().timeIntervalSince1970
            merged.withLock { state in
                state.token = max(state.token, event.token)
                state.latencies.append(event.latency * 1000)
                state.commits.append(mergedAt - event.latency)
            }
        }
        Reply.send(["ready": true, "pid": Int(getpid())])
        while let line = await StandardInput.nextLine() {
            let words = line.split(separator: " ")
            guard words.first == "wait", words.count == 2, let token = Int64(words[1]) else { break }
            let deadline = ContinuousClock.now + .seconds(60)
            while merged.withLock({ $0.token }) < token && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            let (digest, count) = try await main.perform { () throws -> (String, Int) in
                try DemoModel.digest(results.controller?.fetchedObjects ?? [])
            }
            let state = merged.withLock { $0 }
            Reply.send([
                "pid": Int(getpid()), "token": state.token, "digest": digest, "count": count, "latencies_ms": state.latencies, "commits_s": state.commits,
            ])
        }
        observation.cancel()
        await sync.stop()
    }
}

/// The viewer's results controller, touched only on the main context's queue.
private final class ResultsBox: @unchecked Sendable {
    var controller: FetchedResultsController<ManagedObject>?
}

/// One JSON line to the parent.
private enum Reply {
    /// A reply that cannot be encoded is written as an error reply instead, which the parent
    /// reports (its values are numbers the viewer measured).
    static func send(_ object: [String: Any]) {
        do {
            try JSONLine.print(object)
        } catch {
            FileHandle.standardOutput.write(Data(#"{"error":"a reply of the viewer could not be encoded"}"#.utf8) + Data("\n".utf8))
        }
    }
}

/// Lines of standard input, read off the cooperative thread pool.
enum StandardInput {
    static func nextLine() async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: readLine()) }
        }
    }
}
