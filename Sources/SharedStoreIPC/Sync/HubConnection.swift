import AmbarCore
import AmbarDataStack
import Foundation
import Logging
import NIOCore
import NIOPosix

/// A process's link to the hub of its shared directory: connects, serves the hub itself when
/// none answers (if it may), reconnects after a loss, and backs off from a hub that refuses it or
/// does not answer.
///
/// Frames from the hub go to `onFrame`; nothing here reads the ledger. While no hub answers the
/// owner follows the ledger on its own (``isConnected`` is false).
final class HubConnection: Sendable {
    private struct State {
        var client: SyncClient?
        var hub: SyncHub?
        /// The database server's doorbell, while this process serves the hub of a server store.
        var serverDoorbell: ServerDoorbell?
        var lock: HubElectionLock?
        var stopped = false
        /// The last trouble logged, so that a lasting one is logged once, not at every attempt.
        var lastTrouble: String?
        /// The newest save announcement made while no connection was open (before the first
        /// one, while reconnecting, while no hub answers): sent as soon as one is, so that the
        /// others hear of the saves made meanwhile then, not at their next ledger check.
        var unannounced: Frame?

        /// The connection to the hub, when it is open.
        var openClient: SyncClient? { client.flatMap { $0.isActive ? $0 : nil } }

        /// Keeps `frame` if it announces a save newer than the one kept.
        mutating func keepUnannounced(_ frame: Frame) {
            guard let token = frame.announcedToken else { return }
            if let kept = unannounced?.announcedToken, kept >= token { return }
            unannounced = frame
        }
    }

    private let configuration: SharingConfiguration
    private let storeUUID: UUID
    /// The store file (its owner and group may use the hub); `nil` for a store on a server, whose
    /// hub admits the owner and group of the socket's directory.
    private let storeFile: URL?
    private let makeServerDoorbell: (@Sendable (SyncHub) -> ServerDoorbell?)?
    private let cursor: @Sendable () -> Int64
    /// How the process uses the shared-memory bell now, for each `hello`.
    private let bell: @Sendable () -> Frame.BellUse?
    private let onFrame: @Sendable (Frame) -> Void
    private let onConnected: @Sendable () -> Void
    private let onDisconnected: @Sendable () -> Void
    private let state = Locked(State())
    /// The event loops the connection (and a hub this process serves) run on: the
    /// configuration's, which this connection does not own and never shuts down.
    private let group: any EventLoopGroup
    static let logger = Logger(label: "ambar.sync.connection")

    /// A connection for the store `storeUUID` (file `storeFile`); `cursor` gives the ledger
    /// position announced in `hello`, and `bell` how the process uses the shared-memory bell
    /// (call ``reconnect()`` when that changes).
    /// `makeServerDoorbell` makes the database server's doorbell when this process serves the hub
    /// (it listens in ``run()``).
    ///
    /// - Throws: ``AmbarError/tooManyOpenFiles(operation:limit:)`` when the process has too few
    ///   descriptors left for its event loop.
    init(
        configuration: SharingConfiguration, storeUUID: UUID, storeFile: URL?, cursor: @escaping @Sendable () -> Int64,
        bell: @escaping @Sendable () -> Frame.BellUse? = { nil },
        makeServerDoorbell: (@Sendable (SyncHub) -> ServerDoorbell?)? = nil,
        onFrame: @escaping @Sendable (Frame) -> Void, onConnected: @escaping @Sendable () -> Void,
        onDisconnected: @escaping @Sendable () -> Void
    ) throws(AmbarError) {
        // The shared loops start only once the descriptors they take are there (and a few for
        // the sockets); a group of the program's own is its business.
        if let given = configuration.eventLoopGroup {
            self.group = given
        } else {
            self.group = try SharedEventLoops.group(for: "starting the hub connection", more: 8)
        }
        self.configuration = configuration
        self.storeUUID = storeUUID
        self.storeFile = storeFile
        self.makeServerDoorbell = makeServerDoorbell
        self.cursor = cursor
        self.bell = bell
        self.onFrame = onFrame
        self.onConnected = onConnected
        self.onDisconnected = onDisconnected
    }

    /// Whether a hub connection is open.
    var isConnected: Bool { state.withLock { $0.openClient != nil } }
    /// Whether this process serves the hub.
    var servesHub: Bool { state.withLock { $0.hub != nil } }
    /// The database server's doorbell's state, when this process serves the hub of a server store.
    var serverDoorbellState: ServerDoorbell.ListenState? { state.withLock { $0.serverDoorbell?.state } }

    /// Sends `frame` to the hub if connected. Returns whether it was queued: not when there is
    /// no connection, when the hub is not reading (the send side is bounded), or when the frame is
    /// too large (`WireError` is thrown then, and nothing is sent).
    ///
    /// A save's announcement (`didSave`, `tokenOnly`) made while no connection is open is not
    /// lost: the newest one is kept and sent first thing on the next connection.
    @discardableResult
    func send(_ frame: Frame) throws(WireError) -> Bool {
        let client = state.withLock { s -> SyncClient? in
            if let client = s.openClient { return client }
            s.keepUnannounced(frame)
            return nil
        }
        guard let client else { return false }
        return try client.send(frame)
    }

    /// Runs `work` on the event loop of the open connection to the hub, before any frame sent
    /// after this call is written. Returns false, and runs nothing, when no connection is open.
    func runOnConnectionLoop(_ work: @escaping @Sendable () -> Void) -> Bool {
        guard let client = state.withLock({ $0.openClient }) else { return false }
        client.execute(work)
        return true
    }

    /// Closes the open connection, if any, so that the loop of ``run()`` connects again with a
    /// fresh `hello` (the process's use of the bell changed: the hub must relay it frames it
    /// left to the bell before, or may leave out more).
    func reconnect() {
        // Forgotten at once: what is sent from now on waits for the next connection.
        guard
            let client = state.withLock({ s in
                defer { s.client = nil }
                return s.client
            })
        else { return }
        Self.logger.debug("reconnecting to the hub: this process's use of the shared-memory bell changed")
        client.beginClosing()
    }

    /// Closes the connection, stops serving the hub if this process did, and releases the
    /// election lock. Its owner cancels the task that runs ``run()`` first and waits for it (a
    /// connect in flight ends at once then: this never waits on a hub that does not answer, and
    /// the server's doorbell has stopped listening); a loop still running stops at its next turn.
    func stop() async {
        let (client, hub) = state.withLock { s -> (SyncClient?, SyncHub?) in
            s.stopped = true
            defer {
                s.client = nil
                s.hub = nil
                s.serverDoorbell = nil
            }
            return (s.client, s.hub)
        }
        await client?.close()
        await hub?.stop()
        state.withLock { $0.lock = nil }  // released only once the hub has stopped
    }

    // MARK: - Connecting

    /// Connects, and connects again after every loss, until the task running it is cancelled:
    /// serves the hub when none answers (if this process may), and backs off from a hub that
    /// refuses this process or does not answer. Each connection lives inside this loop, which
    /// closes it when cancelled; the database server's doorbell, while this process serves the
    /// hub of a server store, listens in a child task of it.
    func run() async {
        await withDiscardingTaskGroup { listeners in
            await connectAgainAndAgain(doorbellsIn: &listeners)
            listeners.cancelAll()
        }
    }

    /// The loop of ``run()``; a doorbell made on serving the hub listens in `listeners`.
    private func connectAgainAndAgain(doorbellsIn listeners: inout DiscardingTaskGroup) async {
        var backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(30))
        while !state.withLock({ $0.stopped }) && !Task.isCancelled {
            let hello = Frame.Hello(
                storeUUID: storeUUID, processID: getpid(), instanceID: ProcessInstance.id, processName: configuration.resolvedProcessName, cursor: cursor(),
                bell: bell())
            do {
                let client = try await SyncClient.connect(
                    socketPath: configuration.resolvedSocketPath, hello: hello, group: group,
                    maximumFrameSize: configuration.maximumFrameSize, welcomeTimeout: configuration.welcomeTimeout,
                    trustedHub: hubTrust(),
                    onFrame: { [weak self] frame in
                        SharingMetrics.doorbellsReceived.increment()
                        self?.onFrame(frame)
                    },
                    onClose: {})
                let stopped = state.withLock { s -> Bool in
                    if !s.stopped {
                        s.client = client
                        s.lastTrouble = nil
                        // Under the lock: before any announcement sent from now on.
                        if let frame = s.unannounced {
                            s.unannounced = nil
                            Self.announce(frame, on: client)
                        }
                    }
                    return s.stopped
                }
                if stopped {
                    await client.close()
                    return
                }
                Self.logger.debug("connected to the hub", metadata: ["hub-pid": "\(client.welcome.hubProcessID)", "peers": "\(client.welcome.peers)"])
                onConnected()
                await client.waitUntilClosed()  // closes it when this task is cancelled
                let stoppedSince = state.withLock { s -> Bool in
                    s.client = nil
                    return s.stopped
                }
                if stoppedSince || Task.isCancelled { return }
                Self.logger.debug("hub connection lost; reconnecting")
                onDisconnected()
                backoff.reset()
                continue
            } catch SyncClient.ConnectError.refused(let code, let message) {
                trouble("the hub refused this process (\(code)): \(message); following the ledger and retrying with backoff", level: .error)
            } catch SyncClient.ConnectError.untrustedHub(let reason) {
                trouble("refusing the hub: \(reason); following the ledger and retrying with backoff", level: .error)
            } catch SyncClient.ConnectError.noWelcome(let after) {
                trouble("the hub accepted the connection but did not answer within \(after); following the ledger and retrying with backoff", level: .warning)
            } catch is CancellationError {
                return
            } catch {
                // Nobody answers: try to become the hub (if this process may), else retry soon —
                // a hub that died is replaced within tens of milliseconds.
                backoff.reset()
                if configuration.mayServeHub, await becomeHubIfFree() {
                    if let doorbell = state.withLock({ $0.serverDoorbell }) {
                        listeners.addTask { await doorbell.run() }  // until this loop ends
                    }
                    continue
                }
                // Sleeps throw only when the task is cancelled (stop()), which ends the loop.
                do { try await Task.sleep(for: .milliseconds(50)) } catch { return }
                continue
            }
            do { try await Task.sleep(for: backoff.next()) } catch { return }
        }
    }

    /// Sends an announcement kept while no connection was open; one too large for a frame goes
    /// as its token alone.
    private static func announce(_ frame: Frame, on client: SyncClient) {
        do {
            _ = try client.send(frame)
        } catch {
            guard let token = frame.reducedToToken else { return }
            do {
                _ = try client.send(token)
            } catch {
                logger.error("could not send the kept announcement \(token) to the hub (\(error)); the others see it at their next ledger check")
            }
        }
    }

    /// Logs a connection trouble once per change of state (not at every retry).
    private func trouble(_ message: String, level: Logger.Level) {
        let new = state.withLock { s -> Bool in
            defer { s.lastTrouble = message }
            return s.lastTrouble != message
        }
        if new { Self.logger.log(level: level, "\(message)") }
    }

    /// Whose hub this process accepts: root, its own user, and the owner and group of the store
    /// file (for a store on a database server, of the socket's directory) — whom the hub admits.
    private func hubTrust() -> HubTrust {
        let source = storeFile ?? URL(fileURLWithPath: configuration.resolvedSocketPath).deletingLastPathComponent()
        do {
            return try HubTrust(ownerOf: source)
        } catch {
            return .currentUser
        }
    }

    /// Takes the hub lock without waiting; on success serves the hub in this process (and keeps
    /// the server's doorbell, if any, for ``run()`` to listen with).
    private func becomeHubIfFree() async -> Bool {
        if state.withLock({ $0.hub != nil || $0.stopped }) { return false }
        guard let lock = HubElectionLock.take(forSocket: configuration.resolvedSocketPath) else { return false }
        do {
            let socketPath = configuration.resolvedSocketPath
            var hubConfiguration =
                try storeFile.map { try SyncHub.Configuration(socketPath: socketPath, storeUUID: storeUUID, storeFile: $0) }
                ?? SyncHub.Configuration(
                    socketPath: socketPath, storeUUID: storeUUID,
                    storeFile: URL(fileURLWithPath: socketPath).deletingLastPathComponent())
            hubConfiguration.eventLoopGroup = group
            try DescriptorBudget.require(8, for: "starting the hub")  // its event loop stops the process on EMFILE
            let hub = try await SyncHub.start(hubConfiguration)
            let doorbell = makeServerDoorbell?(hub)
            let keep = state.withLock { s -> Bool in
                guard !s.stopped else { return false }
                s.hub = hub
                s.serverDoorbell = doorbell
                s.lock = lock
                return true
            }
            if !keep {
                await hub.stop()
                return false
            }
            Self.logger.debug("serving the hub in this process", metadata: ["socket": "\(configuration.resolvedSocketPath)"])
            return true
        } catch {
            trouble("could not serve the hub: \(error)", level: .error)
            return false
        }
    }
}
