import AmbarStack
import Foundation
import Logging
import RecordImport
import SystemdIntegration

/// Imports the files dropped into an agent's inbox, one transaction per file, exactly once.
///
/// Each file's idempotency key (see ``Inbox/idempotencyKey(for:agent:)``) is saved in the same
/// transaction as its objects. A file found again after a crash — imported but not yet moved —
/// is recognized by its key and only moved. The worker runs on its own thread, and sends the
/// watchdog keep-alives from its loop: if imports hang, systemd notices.
final class InboxWorker: Sendable {
    /// What the worker has done, for STATUS= and the logs.
    struct Counters: Sendable {
        var files = 0
        var objects = 0
        var failed = 0
        var waiting = 0
    }

    private let inbox: Inbox
    private let name: String
    private let stack: DataStack
    private let decoder: ImportRecordDecoderBox
    private let pollInterval: TimeInterval
    private let logger: Logger
    private let stopRequested = Locked(false)
    private let finished = DispatchSemaphore(value: 0)
    private let counterStorage = Locked(Counters())
    private let watchdogInterval: TimeInterval?
    private let lastKeepAlive = Locked(Date.distantPast)

    init(inbox: Inbox, name: String, stack: DataStack, decoder: ImportRecordDecoder, pollInterval: TimeInterval, logger: Logger) {
        self.inbox = inbox
        self.name = name
        self.stack = stack
        self.decoder = ImportRecordDecoderBox(decoder)
        self.pollInterval = pollInterval
        self.logger = logger
        watchdogInterval = Watchdog.keepAliveInterval.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
    }

    /// The counters now.
    var counters: Counters { counterStorage.withLock { $0 } }

    /// Starts the worker's thread.
    func start() {
        let thread = Thread { [self] in
            loop()
            finished.signal()
        }
        thread.name = "inbox-\(name)"
        thread.start()
    }

    /// Asks the worker to stop after the file in progress, and waits until it has.
    func stop() async {
        stopRequested.withLock { $0 = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.finished.wait()
                continuation.resume()
            }
        }
    }

    private var stopping: Bool { stopRequested.withLock { $0 } }

    private func keepAlive() {
        guard let interval = watchdogInterval else { return }
        let due = lastKeepAlive.withLock { last -> Bool in
            guard Date().timeIntervalSince(last) >= interval else { return false }
            last = Date()
            return true
        }
        if due { ServiceNotifier.notify(.watchdog) }
    }

    private func loop() {
        while !stopping {
            keepAlive()
            let files = inbox.waiting()
            counterStorage.withLock { $0.waiting = files.count }
            for file in files {
                guard !stopping else { break }
                process(file)
                keepAlive()
            }
            if files.isEmpty { Thread.sleep(forTimeInterval: pollInterval) }
        }
    }

    private func process(_ file: URL) {
        let fileName = file.lastPathComponent
        do {
            let key = try Inbox.idempotencyKey(for: file, agent: name)
            if let token = try stack.writerCoordinator.savedToken(forIdempotencyKey: key) {
                logger.notice("already imported; moving it to processed", metadata: ["file": "\(fileName)", "token": "\(token)"])
                try inbox.markProcessed(file)
                return
            }
            var importer = RecordImporter(stack: stack, decoder: decoder.value)
            importer.batchSize = .max
            importer.onError = .abort
            importer.author = "sync-agent run \(name)"
            let report = try importer.run(try LineSource(path: file.path), idempotencyKey: key, heartbeat: { keepAlive() })
            if let error = report.abortedBy {
                let text = "\(fileName): not imported; nothing of it was written.\nerror: \(error)\n"
                try inbox.markFailed(file, report: text)
                counterStorage.withLock { $0.failed += 1 }
                logger.error("file rejected", metadata: ["file": "\(fileName)", "line": "\(error.line)", "field": "\(error.field ?? "-")", "reason": "\(error.reason)"])
                return
            }
            FaultInjection.point("after-commit")
            try inbox.markProcessed(file)
            counterStorage.withLock { $0.files += 1; $0.objects += report.inserted + report.updated }
            logger.notice("imported", metadata: [
                "file": "\(fileName)", "token": "\(report.tokens.first.map(String.init) ?? "-")",
                "inserted": "\(report.inserted)", "updated": "\(report.updated)",
            ])
        } catch AmbarError.alreadySaved(_, let token) {
            // Another instance imported the same file between our check and our save.
            logger.notice("already imported; moving it to processed", metadata: ["file": "\(fileName)", "token": "\(token)"])
            do {
                try inbox.markProcessed(file)
            } catch {
                // The next pass finds the receipt again and retries the move.
                logger.error("could not move an imported file; will retry", metadata: ["file": "\(fileName)", "error": "\(error)"])
            }
        } catch {
            // Not a problem of the file's content (the store or the file system): leave the file
            // where it is and try again later.
            logger.error("could not import; will retry", metadata: ["file": "\(fileName)", "error": "\(error)"])
            Thread.sleep(forTimeInterval: max(pollInterval, 1))
        }
    }
}

/// The decoder, shared read-only with the worker thread.
private final class ImportRecordDecoderBox: @unchecked Sendable {
    let value: ImportRecordDecoder
    init(_ value: ImportRecordDecoder) { self.value = value }
}
