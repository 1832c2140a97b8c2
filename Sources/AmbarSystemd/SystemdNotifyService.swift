import Foundation
import ServiceLifecycle

/// Speaks systemd's `Type=notify` protocol for a daemon of your own, as a swift-service-lifecycle
/// `Service`: `READY=1` with a first `STATUS=` when it starts, `STATUS=` whenever the status line
/// changes, `WATCHDOG=1` while your work loop reports progress, and `STOPPING=1` at graceful
/// shutdown (SIGTERM, for a group that listens for it).
///
/// Put it last in the `ServiceGroup`, after the services it reports on: it starts once they were
/// set up (READY means "serving"), and, since a group shuts services down in reverse order, it
/// says STOPPING before they stop.
///
/// ```swift
/// let sync = try await SharedStoreSync.start(stack: stack, configuration: .sharedDirectory(directory))
/// let notifier = try ChangeConsumer(name: "notifier", sharing: sync)
/// let systemd = SystemdNotifyService(
///     status: { "at token \(notifier.position ?? 0)" },
///     isAlive: { notifier.isProgressing(within: .seconds(30)) })
/// let group = ServiceGroup(
///     services: [sync, notifier.service(handle), systemd],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// The watchdog is fed only while `isAlive` answers `true`: let it say whether the loop that does
/// the work went round recently, so that a stuck loop stops the keep-alives and systemd restarts
/// the service (`WatchdogSec=`, `Restart=on-failure`). Without `$NOTIFY_SOCKET` (run from a
/// terminal) nothing is sent and the service only waits for shutdown.
public struct SystemdNotifyService: Service {
    private let readiness: @Sendable () async -> Void
    private let status: @Sendable () async -> String
    private let isAlive: @Sendable () async -> Bool
    private let statusInterval: Duration

    /// A notifier that sends READY once `readiness` returned (at once by default), reports
    /// `status` (checked every `statusInterval`, sent when it changed) and feeds the watchdog
    /// while `isAlive` returns `true`.
    public init(
        readiness: @escaping @Sendable () async -> Void = {}, status: @escaping @Sendable () async -> String,
        isAlive: @escaping @Sendable () async -> Bool = { true }, statusInterval: Duration = .seconds(5)
    ) {
        self.readiness = readiness
        self.status = status
        self.isAlive = isAlive
        self.statusInterval = statusInterval
    }

    /// Sends READY=1, then keeps STATUS= and the watchdog current until graceful shutdown, when it
    /// sends STOPPING=1 and returns.
    public func run() async throws {
        await cancelWhenGracefulShutdown { await readiness() }
        guard !Task.isShuttingDownGracefully, !Task.isCancelled else {
            ServiceNotifier.notify(.stopping)
            return
        }
        var last = await status()
        ServiceNotifier.notify(.ready, .status(last))
        let keepAlive = Watchdog.keepAliveInterval
        let tick = keepAlive.map { min($0, statusInterval) } ?? statusInterval
        while true {
            // A sleep cut short by graceful shutdown (or cancellation) throws: time to stop.
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: tick) }
            } catch {
                break
            }
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            if keepAlive != nil, await isAlive() { ServiceNotifier.notify(.watchdog) }
            let now = await status()
            if now != last {
                ServiceNotifier.notify(.status(now))
                last = now
            }
        }
        ServiceNotifier.notify(.stopping)
    }
}
