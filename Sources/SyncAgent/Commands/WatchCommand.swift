import AmbarCore
import AmbarDataStack
import AmbarSystemd
import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SharedStoreIPC

/// `sync-agent watch`: keeps a main context live and prints every transaction merged into it; with
/// `--consumer NAME`, prints every transaction after NAME's recorded position, as a durable
/// consumer that moves its position only after each line is written.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each transaction of other processes as it is merged into a live main context.",
        discussion: """
            With --consumer NAME it is a durable consumer: it resumes after NAME's recorded position \
            (transactions committed while it was not running included), and moves that position only \
            after the lines of the transactions before it were written to standard output. So a line \
            is never missed; after a crash (or SIGKILL) the last lines may be printed again, with the \
            same tokens. History purged before NAME read it prints a "history_expired": true line \
            (with "after" and "purged_through") and continues from the ledger's head. NAME's position \
            stays in the store until `sync-agent consumers --remove NAME`. One copy of NAME prints at a \
            time: it holds NAME with an ownership lease (--lease, 5 s), and another copy of the same \
            NAME, on this host or another sharing the store, stands by (its systemd status says so) \
            and takes over when that lease lapses (the active copy was killed, stopped or hung) or \
            within a check (2 s) after the active copy stops gracefully.
            """)

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var socket: SocketOptions
    @OptionGroup var metricsOptions: MetricsOptions

    @Flag(name: .long, help: "One JSON object per line: token, author, pid, instance, inserted, updated, deleted, latency_ms, history_expired.")
    var json = false

    @Option(name: .long, help: "Print as the durable consumer NAME: resume after its position, and move it after each line is written.")
    var consumer: String?

    @Option(
        name: .long, help: "Where a consumer without a recorded position starts: head (what is committed from now on) or oldest (all history the ledger holds)."
    )
    var from: StartingPointOption = .head

    @Option(name: .long, help: "With --consumer: the ownership lease in seconds, 0.3 to 86400 (default 5), after which a copy standing by takes over.")
    var lease: Double = 5

    enum StartingPointOption: String, ExpressibleByArgument, CaseIterable {
        case head, oldest
    }

    func validate() throws {
        if consumer == nil && from != .head { throw ValidationError("--from applies to --consumer only") }
        if consumer == nil && lease != 5 { throw ValidationError("--lease applies to --consumer only") }
        guard lease >= 0.3, lease <= 86_400 else { throw ValidationError("--lease must be from 0.3 to 86400 seconds, not \(lease)") }
    }

    func run() async throws {
        let metrics = try metricsOptions.endpoint(command: "watch")
        // A consumer's copies say on standard error (the journal) when they stand by and take over.
        bootstrapLogging(level: consumer == nil ? .warning : .notice)
        let logger = Logger(label: "ambar.agent.watch")
        // Everything inside the service group, whose signal handlers are in place from the start:
        // a SIGTERM at any point stops it cleanly.
        try await AgentService.runGroup(logger: logger, beside: try metrics.map { [try $0.service(logger: logger)] } ?? []) { services in
            try await setUp(services, metrics: metrics, logger: logger)
        }
    }

    /// Opens the store and adds sharing, the printing and the notifier for systemd to the group,
    /// which runs until graceful shutdown, or until the store file is replaced (sharing fails:
    /// exit non-zero).
    private func setUp(_ services: AgentServices, metrics: MetricsEndpoint?, logger: Logger) async throws {
        let stack = try openExistingStack(directory)
        if let metrics {
            let coordinator = try stack.mainCoordinator
            metrics.collect { LedgerMetrics.collect(coordinator) }
        }
        var configuration = try socket.sharing(in: directory.url, as: consumer.map { "sync-agent watch \($0)" } ?? "sync-agent watch")
        if consumer != nil { configuration.readsChangedRowsAhead = false }  // its main context shows nothing
        // Sharing's loops run in the group, as child tasks of its service.
        let sync = try SharedStoreSync(sharing: stack, configuration: configuration)
        await services.add(sync)
        let asJSON = json
        if let consumer {
            let durable = try makeConsumer(consumer, sync: sync)
            await services.add(AgentService { try await print(durable, asJSON: asJSON) })
            await services.add(
                SystemdNotifyService(
                    status: {
                        durable.isStandingBy
                            ? "consumer \(consumer) standing by (active: \(durable.activeOwner.map { "\($0)" } ?? "another copy"))"
                            : "consumer \(consumer) at token \(durable.position.map(String.init) ?? "none")"
                    }, logger: logger))
        } else {
            await services.add(AgentService { await printMerges(sync) })
            await services.add(SystemdNotifyService(status: { "printing the merges into the main context" }, logger: logger))
        }
    }

    /// Prints each merge into the main context until graceful shutdown.
    private func printMerges(_ sync: SharedStoreSync) async {
        let asJSON = json
        let observation = sync.observeRemoteMerges { event in
            if asJSON {
                Self.printOrReport(event.token) {
                    try JSONLine.print([
                        "token": event.token, "author": event.author ?? NSNull(), "pid": Int(event.processID),
                        "instance": event.instanceID == 0 ? NSNull() : InstanceID.text(event.instanceID),
                        "inserted": TransactionLine.uris(event.inserted), "updated": TransactionLine.uris(event.updated),
                        "deleted": TransactionLine.uris(event.deleted), "latency_ms": event.latency * 1000, "history_expired": event.historyExpired,
                    ])
                }
            } else {
                let line =
                    event.historyExpired
                    ? "history expired: refreshed every object (now at token \(event.token))"
                    : TransactionLine.text(
                        token: event.token, processID: event.processID, author: event.author, inserted: event.inserted, updated: event.updated,
                        deleted: event.deleted, latency: event.latency)
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
        }
        // try?: it throws only when cancelled, which also means stop
        try? await gracefulShutdown()
        observation.cancel()
    }

    /// Runs `print`; a merge that cannot be printed is said on standard error (the merge itself
    /// happened: this watcher is not a durable consumer, it has no position to keep).
    private static func printOrReport(_ token: Int64, _ print: () throws -> Void) {
        do {
            try print()
        } catch {
            FileHandle.standardError.write(Data("sync-agent watch: the merge of transaction \(token) could not be printed: \(error)\n".utf8))
        }
    }

    /// The durable consumer NAME, reading batches of up to 100 transactions.
    private func makeConsumer(_ name: String, sync: SharedStoreSync) throws -> ChangeConsumer {
        var options = ChangeConsumer.Options()
        options.maximumBatchSize = 100
        options.startingPoint = from == .oldest ? .oldestRetained : .head
        options.lease = .milliseconds(Int64((lease * 1000).rounded()))
        return try ChangeConsumer(name: name, sharing: sync, options: options)
    }

    /// Prints the consumer's events until graceful shutdown.
    private func print(_ consumer: ChangeConsumer, asJSON: Bool) async throws {
        let name = consumer.name
        try await withGracefulShutdownHandler {
            for try await event in consumer.events() {
                switch event {
                case .transactions(let batch):
                    for transaction in batch.transactions {
                        if asJSON {
                            do {
                                try JSONLine.print(TransactionLine.json(transaction))
                            } catch {
                                // The position stays before it: the consumer moves past a line
                                // only once it is written.
                                throw UnprintableTransaction(consumer: name, token: transaction.token, cause: error)
                            }
                        } else {
                            let line = TransactionLine.text(
                                token: transaction.token, processID: transaction.processID, author: transaction.author,
                                inserted: transaction.inserted, updated: transaction.updated, deleted: transaction.deleted,
                                latency: max(0, Date().timeIntervalSince(transaction.timestamp)))
                            FileHandle.standardOutput.write(Data((line + "\n").utf8))
                        }
                    }
                case .historyExpired(let expiry):
                    if asJSON {
                        try JSONLine.print([
                            "token": expiry.head, "history_expired": true, "after": expiry.position, "purged_through": expiry.purgedThrough,
                        ])
                    } else {
                        let line =
                            "history expired: the transactions after \(expiry.position) through \(expiry.purgedThrough) were purged before \(name) read them; continuing after token \(expiry.head)"
                        FileHandle.standardOutput.write(Data((line + "\n").utf8))
                    }
                }
            }
        } onGracefulShutdown: {
            consumer.stop()
        }
    }
}

/// A transaction a durable consumer could not print: the command stops with its position before
/// it.
struct UnprintableTransaction: Error, CustomStringConvertible {
    let consumer: String
    let token: Int64
    let cause: any Error

    var description: String {
        "transaction \(token) could not be printed as JSON (\(cause)); \(consumer)'s position stays before it"
    }
}
