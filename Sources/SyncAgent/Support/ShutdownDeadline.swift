import AmbarCore
import AmbarDataStack
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A bound on graceful shutdown: once SIGTERM or SIGINT arrives, the process has `seconds` to
/// finish stopping; past that — a database server or a hub that does not answer holds a thread
/// in a statement or a connection attempt — it logs what happened and exits, instead of waiting
/// for timeouts of a minute or for systemd's SIGKILL. Nothing is lost by it: what was committed is
/// in the ledger, a transaction in progress rolls back (an inbox file stays in the inbox), and
/// positions recorded late are recorded again at the next start. The process then exits with
/// ``forcedExitStatus``, not 0: the shutdown was not the graceful one, and the service manager's
/// record says so.
final class ShutdownDeadline: @unchecked Sendable {
    /// How long a graceful shutdown may take.
    static let defaultSeconds: Double = 5
    /// The exit status of a process the deadline ended (124, as `timeout(1)` exits).
    static let forcedExitStatus: Int32 = 124

    private let sources: [any DispatchSourceSignal]

    /// Arms the deadline for the life of the process.
    init(seconds: Double = ShutdownDeadline.defaultSeconds, logger: Logger) {
        let queue = DispatchQueue(label: "ambar.shutdown-deadline")
        let armed = Locked(false)
        sources = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                guard
                    armed.withLock({ was in
                        defer { was = true }
                        return !was
                    })
                else { return }
                let thread = Thread {
                    Thread.sleep(forTimeInterval: seconds)
                    logger.error(
                        "graceful shutdown did not finish within \(Int(seconds)) s (a database server or hub that does not answer?); exiting with status \(ShutdownDeadline.forcedExitStatus) without waiting. Nothing is lost: the ledger holds every commit"
                    )
                    // _exit, not exit: exit's handlers would run under threads still at work (and
                    // can crash there); what was written is flushed first.
                    fflush(nil)
                    _exit(ShutdownDeadline.forcedExitStatus)
                }
                thread.start()
            }
            source.resume()
            return source
        }
    }
}
