import AmbarModels
import AmbarSystemd
import Foundation
import Logging
import ServiceLifecycle
import SharedStoreIPC

/// The notifier: a daemon that makes one `Notice` for each task marked done, exactly once, even
/// when it is killed at any point. It is a durable consumer: it resumes after its position, and
/// each notice is saved in the same transaction as the position past the change that caused it.
/// Under systemd it is `Type=notify` (READY, STATUS, WATCHDOG from the consumer's loop,
/// STOPPING); SIGTERM stops it cleanly.
enum Notifier {
    static func run(directory: URL, consumer name: String) async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .notice
            return handler
        }
        let logger = Logger(label: "tracker.notifier")
        let stack = try Tracker.open(directory)
        // Shared from here; the group below runs sharing's loops.
        let sync = try SharedStoreSync(sharing: stack, configuration: .sharedDirectory(directory))
        var options = ChangeConsumer.Options()
        options.startingPoint = .oldestRetained  // tasks marked done before its first start count too
        let notifier = try ChangeConsumer(name: name, sharing: sync, options: options)
        let made = Counter()

        let consuming = notifier.service(reconcile: reconcile) { transaction, context in
            // The tasks this transaction marked done (the ledger names the changed properties).
            for id in transaction.updated where id.entityName == Tracker.Task.entityName {
                guard transaction.updatedProperties[id]?.contains("done") == true else { continue }
                // Gone since (its project was deleted): nothing to notify.
                guard let task = try? context.existingObject(with: id) as? Tracker.Task, task.done else { continue }
                try context.insert(Tracker.Notice(for: task, token: transaction.token))
                made.add(1)
            }
        }
        let systemd = SystemdNotifyService(
            status: { "\(made.value) notices made; at token \(notifier.position ?? 0)" },
            isAlive: { notifier.isProgressing(within: .seconds(30)) })
        say("notifier \(name) ready")
        let group = ServiceGroup(services: [sync, consuming, systemd], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }

    /// After history the notifier had not handled was purged: every done task without a notice
    /// gets one, from the data (idempotent, as a reconcile step must be).
    @Sendable static func reconcile(_ expiry: HistoryExpiry, _ context: ManagedObjectContext) throws {
        let done = try context.fetch(try FetchRequest<Tracker.Task>(predicate: #Predicate { $0.done }))
        for task in done where task.notices.isEmpty {
            try context.insert(Tracker.Notice(for: task, token: expiry.head))
        }
    }
}

/// A count shared between the handler's queue and the status line.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add(_ n: Int) { lock.withLock { count += n } }
}
