import AmbarCore
import AmbarDataStack
import Foundation
import Logging
import RecordImport

/// Imports the files dropped into an agent's inbox, one transaction per file, exactly once.
///
/// Each file's idempotency key (see ``Inbox/idempotencyKey(for:agent:)``) is saved in the same
/// transaction as its objects. A file found again after a crash — imported but not yet moved —
/// is recognized by its key and only moved. The worker runs on its own thread, and says whether
/// its loop goes round (``isAlive(within:)``), which the watchdog keep-alives follow: if imports
/// hang, systemd notices.
///
/// Only what is wrong with a file's data (a line that does not decode, a value that fails
/// validation, a uniqueness constraint, a line longer than the maximum, a file larger than the
/// maximum) sends it to `failed/`. When the store cannot take it (busy, full, read-only, an I/O
/// error) the file stays in the inbox and is tried again with a growing delay (1 s doubling to
/// 60 s), while the loop goes on (alive) and ``Counters/retrying`` says why. An inbox folder
/// that cannot be read is not taken for an empty one: ``Counters/retrying`` and the log say so,
/// and the worker is not alive until it can be read again.
final class InboxWorker: Sendable {
    /// What the worker has done, for STATUS= and the logs.
    struct Counters: Sendable {
        var files = 0
        var objects = 0
        var failed = 0
        var waiting = 0
        /// Why the last file could not be imported, while it waits to be tried again.
        var retrying: String?
    }

    /// Limits on what a file may hold.
    struct Limits: Sendable {
        /// A longer line is a line error (the file goes to `failed/`).
        var maximumLineBytes = LineSource.defaultMaximumLineBytes
        /// A larger file is refused (it goes to `failed/` with the reason): one file is one
        /// transaction, held in memory until it commits.
        var maximumFileBytes = 256 << 20
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
    /// The same work as metrics (nothing recorded without a metrics backend).
    private let metrics: InboxMetrics
    private let clock = ContinuousClock()
    /// When the loop last went round (or a file in progress read another chunk).
    private let lastRound: Locked<ContinuousClock.Instant>
    /// The inbox folder could not be read at the last look.
    private let inboxUnreadable = Locked(false)
    private let limits: Locked<Limits>
    /// Files the store could not take, with when to try each again and the current delay.
    private let retries = Locked<[String: (at: ContinuousClock.Instant, backoff: Duration)]>([:])

    init(
        inbox: Inbox, name: String, stack: DataStack, decoder: ImportRecordDecoder, pollInterval: TimeInterval,
        limits: Limits = Limits(), logger: Logger
    ) {
        self.limits = Locked(limits)
        self.inbox = inbox
        self.name = name
        self.metrics = InboxMetrics(agent: name)
        self.stack = stack
        self.decoder = ImportRecordDecoderBox(decoder)
        self.pollInterval = pollInterval
        self.logger = logger
        lastRound = Locked(clock.now)
    }

    /// Applies new limits from the next file on (a reloaded configuration).
    func setLimits(_ new: Limits) { limits.withLock { $0 = new } }

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

    /// Whether the worker does its work: its loop went round within `interval`, and the inbox
    /// could be read (what the watchdog keep-alives follow).
    func isAlive(within interval: Duration) -> Bool {
        !inboxUnreadable.withLock { $0 } && clock.now - lastRound.withLock { $0 } < interval
    }

    private func wentRound() {
        let now = clock.now
        lastRound.withLock { $0 = now }
    }

    /// How ``Counters/retrying`` begins while the inbox folder cannot be read.
    private static let unreadableInbox = "the inbox cannot be read"

    private func loop() {
        while !stopping {
            let files: [URL]
            do {
                files = try inbox.waiting()
            } catch {
                // Not read as empty: said in the status and the log, and the worker is not alive
                // (no keep-alives), so that a service manager sees the agent is not doing its work.
                inboxUnreadable.withLock { $0 = true }
                let reason = "\(Self.unreadableInbox) (\(error)); nothing is imported until it can"
                if counterStorage.withLock({ counters in
                    defer { counters.retrying = reason }
                    return counters.retrying != reason
                }) {
                    logger.error(
                        "the inbox cannot be read; nothing is imported until it can", metadata: ["inbox": "\(inbox.incoming.path)", "error": "\(error)"])
                }
                Thread.sleep(forTimeInterval: pollInterval)
                continue
            }
            inboxUnreadable.withLock { $0 = false }
            wentRound()
            counterStorage.withLock { counters in
                counters.waiting = files.count
                if counters.retrying?.hasPrefix(Self.unreadableInbox) == true { counters.retrying = nil }
            }
            metrics.waiting.record(files.count)
            // Files waiting for a retry are skipped until their time; the loop goes on (alive)
            // meanwhile.
            let now = clock.now
            let due = retries.withLock { pending in
                pending = pending.filter { name, _ in files.contains { $0.lastPathComponent == name } }
                return files.filter { file in pending[file.lastPathComponent].map { $0.at <= now } ?? true }
            }
            for file in due {
                guard !stopping else { break }
                process(file)
                wentRound()
            }
            if due.isEmpty { Thread.sleep(forTimeInterval: pollInterval) }
        }
    }

    /// The store could not take `file`: try it again later, each time after twice the delay.
    private func retryLater(_ file: URL, because error: any Error) {
        let name = file.lastPathComponent
        let now = clock.now
        let delay = retries.withLock { pending -> Duration in
            let delay = pending[name].map { min($0.backoff * 2, .seconds(60)) } ?? .seconds(1)
            pending[name] = (now + delay, delay)
            return delay
        }
        let reason = "\(name) waits for the store (\(error)); next attempt in \(delay)"
        counterStorage.withLock { $0.retrying = reason }
        metrics.retrying(because: error)
        logger.error(
            "could not import; the file stays in the inbox and is tried again",
            metadata: [
                "file": "\(name)", "error": "\(error)", "retry-in": "\(delay)",
            ])
    }

    private func succeeded(_ file: URL) {
        retries.withLock { _ = $0.removeValue(forKey: file.lastPathComponent) }
        counterStorage.withLock { $0.retrying = nil }
        metrics.retrying(because: nil)
    }

    private func process(_ file: URL) {
        let fileName = file.lastPathComponent
        do {
            let key = try Inbox.idempotencyKey(for: file, agent: name)
            if let token = try stack.writerCoordinator.savedToken(forIdempotencyKey: key) {
                logger.notice("already imported; moving it to processed", metadata: ["file": "\(fileName)", "token": "\(token)"])
                try stack.writerCoordinator.verifyStoreIdentity()  // the receipt is in the store at the path
                try inbox.markProcessed(file)
                return
            }
            let limits = self.limits.withLock { $0 }
            let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
            if size > limits.maximumFileBytes {
                let text =
                    "\(fileName): not imported; nothing of it was written.\nerror: the file is \(size) bytes, more than the maximum of \(limits.maximumFileBytes) (max-file-bytes): a file is imported in one transaction; split it into smaller files.\n"
                try inbox.markFailed(file, report: text)
                counterStorage.withLock { $0.failed += 1 }
                metrics.failed.increment()
                succeeded(file)
                logger.error("file refused: too large", metadata: ["file": "\(fileName)", "bytes": "\(size)", "maximum": "\(limits.maximumFileBytes)"])
                return
            }
            var importer = RecordImporter(stack: stack, decoder: decoder.value)
            importer.batchSize = .max
            importer.onError = .abort
            importer.author = "sync-agent run \(name)"
            let report = try importer.run(
                try LineSource(path: file.path, maximumLineBytes: limits.maximumLineBytes), idempotencyKey: key, heartbeat: { wentRound() })
            if let error = report.abortedBy {
                let text = "\(fileName): not imported; nothing of it was written.\nerror: \(error)\n"
                try inbox.markFailed(file, report: text)
                counterStorage.withLock { $0.failed += 1 }
                metrics.failed.increment()
                succeeded(file)
                logger.error(
                    "file rejected", metadata: ["file": "\(fileName)", "line": "\(error.line)", "field": "\(error.field ?? "-")", "reason": "\(error.reason)"])
                return
            }
            FaultInjection.point("after-commit")
            // Moved only once its transaction is in the store at the path: a store file replaced
            // meanwhile (a restore) keeps the file in the inbox, for the restarted agent to import.
            try stack.writerCoordinator.verifyStoreIdentity()
            try inbox.markProcessed(file)
            succeeded(file)
            counterStorage.withLock {
                $0.files += 1
                $0.objects += report.inserted + report.updated
            }
            metrics.imported.increment()
            metrics.objects.increment(by: report.inserted + report.updated)
            logger.notice(
                "imported",
                metadata: [
                    "file": "\(fileName)", "token": "\(report.tokens.first.map(String.init) ?? "-")",
                    "inserted": "\(report.inserted)", "updated": "\(report.updated)",
                ])
        } catch AmbarError.alreadySaved(_, let token) {
            // Another instance imported the same file between our check and our save.
            logger.notice("already imported; moving it to processed", metadata: ["file": "\(fileName)", "token": "\(token)"])
            do {
                try stack.writerCoordinator.verifyStoreIdentity()
                try inbox.markProcessed(file)
                succeeded(file)
            } catch {
                // The next pass finds the receipt again and retries the move.
                retryLater(file, because: error)
            }
        } catch {
            // Not a problem of the file's content (the store or the file system): leave the file
            // where it is and try again later.
            retryLater(file, because: error)
        }
    }
}

/// The decoder, shared read-only with the worker thread.
private final class ImportRecordDecoderBox: @unchecked Sendable {
    let value: ImportRecordDecoder
    init(_ value: ImportRecordDecoder) { self.value = value }
}
