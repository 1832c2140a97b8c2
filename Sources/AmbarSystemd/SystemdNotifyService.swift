import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// Speaks systemd's `Type=notify` protocol for a daemon of your own, as a swift-service-lifecycle
/// `Service`: `READY=1` with a first `STATUS=` when it starts, `STATUS=` whenever the status line
/// changes, `WATCHDOG=1` while your work loop reports progress, `RELOADING=1` … `READY=1` around
/// a reload on SIGHUP, and `STOPPING=1` at graceful shutdown (SIGTERM, for a group that listens
/// for it).
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
///     isAlive: { notifier.isProgressing(within: .seconds(30)) },
///     reload: { try settings.reload() })
/// let group = ServiceGroup(
///     services: [sync, notifier.service(handle), systemd],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
///
/// The watchdog is fed only while `isAlive` answers `true`: let it say whether the loop that does
/// the work went round recently, so that a stuck loop stops the keep-alives and systemd restarts
/// the service (`WatchdogSec=`, `Restart=on-failure`). Without `$NOTIFY_SOCKET` (run from a
/// terminal) nothing is sent and the service only waits for shutdown (and handles SIGHUP, when
/// it reloads).
///
/// A reload (`ExecReload=kill -HUP $MAINPID`) that throws keeps the service running on its
/// previous configuration: READY=1 follows RELOADING=1 all the same, with a STATUS= that says the
/// reload failed and why.
public struct SystemdNotifyService: Service {
    private let readiness: @Sendable () async -> Void
    private let status: @Sendable () async -> String
    private let isAlive: @Sendable () async -> Bool
    private let reload: (@Sendable () async throws -> Void)?
    private let statusInterval: Duration
    private let logger: Logger?

    /// A notifier that sends READY once `readiness` returned (at once by default), reports
    /// `status` (checked every `statusInterval`, sent when it changed), feeds the watchdog while
    /// `isAlive` returns `true`, and, given `reload`, runs it on each SIGHUP. With a `logger`,
    /// readiness, reloads and stopping are logged too (at notice level; a failed reload as an
    /// error).
    public init(
        readiness: @escaping @Sendable () async -> Void = {}, status: @escaping @Sendable () async -> String,
        isAlive: @escaping @Sendable () async -> Bool = { true }, reload: (@Sendable () async throws -> Void)? = nil,
        statusInterval: Duration = .seconds(5), logger: Logger? = nil
    ) {
        self.readiness = readiness
        self.status = status
        self.isAlive = isAlive
        self.reload = reload
        self.statusInterval = statusInterval
        self.logger = logger
    }

    /// Sends READY=1, then keeps STATUS= and the watchdog current (and reloads on SIGHUP) until
    /// graceful shutdown, when it sends STOPPING=1 and returns.
    public func run() async throws {
        await cancelWhenGracefulShutdown { await readiness() }
        guard !Task.isShuttingDownGracefully, !Task.isCancelled else {
            stopping()
            return
        }
        let first = await status()
        ServiceNotifier.notify(.ready, .status(first))
        logger?.notice("ready", metadata: ["status": "\(first)"])
        await withTaskGroup(of: Void.self) { group in
            if let reload {
                group.addTask { await reloadOnHangup(reload) }
            }
            await keepCurrent(from: first)
            group.cancelAll()
        }
        stopping()
    }

    private func stopping() {
        ServiceNotifier.notify(.stopping)
        logger?.notice("stopping")
    }

    /// STATUS= and WATCHDOG=1 until graceful shutdown (or cancellation); without a service
    /// manager, only the wait.
    private func keepCurrent(from first: String) async {
        guard ServiceNotifier.isSupervised else {
            try? await gracefulShutdown()  // try?: it throws only when cancelled, which also means stop
            return
        }
        var last = first
        let keepAlive = Watchdog.keepAliveInterval
        let tick = keepAlive.map { min($0, statusInterval) } ?? statusInterval
        while true {
            // A sleep cut short by graceful shutdown (or cancellation) throws: time to stop.
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: tick) }
            } catch {
                return
            }
            if Task.isShuttingDownGracefully || Task.isCancelled { return }
            if keepAlive != nil, await isAlive() { ServiceNotifier.notify(.watchdog) }
            let now = await status()
            if now != last {
                ServiceNotifier.notify(.status(now))
                last = now
            }
        }
    }

    /// Runs `reload` on each SIGHUP until graceful shutdown, between RELOADING=1 and READY=1.
    private func reloadOnHangup(_ reload: @Sendable () async throws -> Void) async {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            ServiceNotifier.notify(.reloading)
            logger?.notice("reloading the configuration")
            do {
                try await reload()
                ServiceNotifier.notify(.ready, .status(await status()))
                logger?.notice("configuration reloaded")
            } catch {
                // READY=1 must follow RELOADING=1 even when the new configuration is bad: the old
                // one stays in force.
                ServiceNotifier.notify(.ready, .status("reload failed, previous configuration kept: \(error)"))
                logger?.error("reload failed; keeping the previous configuration", metadata: ["error": "\(error)"])
            }
        }
    }
}
