import AmbarStack
import ArgumentParser
import Foundation
import Logging

/// `ambar-soak worker`: one soak process, started (and killed) by `ambar-soak run`.
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker", abstract: "One soak process; `ambar-soak run` starts these.", shouldDisplay: false)

    @Option(help: "The shared directory.") var directory: String
    @Option(help: "The process's name (its ledger consumer is soak-NAME).") var name: String
    @Option(help: "What it writes.") var role: WorkerRole
    @Option(help: "Where it records its events.") var events: String
    @Option(help: "The key space.") var keys = 2000
    @Option(help: "Milliseconds between two saves.") var pace = 20
    @Flag(help: "Never serve the hub.") var mayNotServeHub = false
    @Option(help: "Seconds of ledger history kept (while it serves the hub, it purges).") var historyRetention: Double?
    @Option(help: "Seconds a consumer counts as alive after it last recorded its position.") var consumerLease: Double?

    func run() throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info
            return handler
        }
        signal(SIGPIPE, SIG_IGN)
        let worker = try SoakWorker(
            directory: URL(fileURLWithPath: directory), name: name, role: role, keys: keys,
            pace: Double(pace) / 1000, eventsPath: events, mayServeHub: !mayNotServeHub,
            retention: HistoryRetention(history: historyRetention ?? 86_400, consumerLease: consumerLease ?? 86_400))
        try worker.start()
        dispatchMain()
    }
}
