import AmbarCore
import AmbarDataStack
import Foundation
import Logging
import NIOCore
import NIOPosix

/// The hub: accepts processes of one store on a Unix socket and relays each did-save message to
/// every other process, never back to its sender. It keeps no state that matters: a restarted hub
/// only costs its clients a catch-up from the ledger. The same code runs in-process (the elected
/// process of a shared directory) and in the dedicated `sync-agent hub` daemon.
public final class SyncHub: Sendable {
    /// What the hub serves.
    public struct Configuration: Sendable {
        /// The socket path.
        public var socketPath: String
        /// The store whose processes it serves.
        public var storeUUID: UUID
        /// The store file's owner and group: peers must be one or belong to the other.
        public var allowedOwner: UInt32
        public var allowedGroup: UInt32
        /// The largest frame accepted.
        public var maximumFrameSize = WireFormat.defaultMaximumFrameSize
        /// The most processes served at once (admitted by their `hello`); more are refused with
        /// a clear error.
        public var maximumPeers = 256
        /// The most connections that have not completed their handshake yet, counted apart from
        /// the peers: silent connections can never take the peers' places.
        public var maximumPendingHandshakes = 64
        /// How long a connection has to send its `hello`; it is closed after that.
        public var handshakeTimeout: Duration = .seconds(5)
        /// The most bytes queued for one peer that is not reading. Past it, the peer's frames are
        /// dropped, and it is told to catch up from the ledger once it drains, so a frozen
        /// process costs the hub at most this much memory. Large enough for a burst of saves to
        /// a live peer on a busy machine.
        public var maximumBacklogBytes = 4 << 20
        /// A listening Unix socket inherited from the service manager (socket activation). When
        /// set, the hub serves it instead of binding ``socketPath``, and leaves the path alone:
        /// the .socket unit owns it.
        public var inheritedSocket: Int32?
        /// The event loops the hub runs on; `nil` (the default) for NIO's shared group. The hub
        /// keeps to one loop of it (its connections' state is that loop's alone), and does not
        /// shut it down when it stops.
        public var eventLoopGroup: (any EventLoopGroup)?

        /// A configuration for the store at `storeFile`, taking its owner and group (for a store
        /// on a database server: the shared directory's).
        public init(socketPath: String, storeUUID: UUID, storeFile: URL) throws {
            let attributes = try FileManager.default.attributesOfItem(atPath: storeFile.path)
            self.socketPath = socketPath
            self.storeUUID = storeUUID
            self.allowedOwner = (attributes[.ownerAccountID] as? NSNumber)?.uint32Value ?? getuid()
            self.allowedGroup = (attributes[.groupOwnerAccountID] as? NSNumber)?.uint32Value ?? getgid()
        }
    }

    /// A connected process, as the hub sees it.
    public struct PeerInfo: Sendable, Hashable {
        /// Its process ID and name, from its hello.
        public let processID: Int32
        public let processName: String
        /// Its process instance, from its hello.
        public let instanceID: UInt64
        /// The ledger position it announced in its hello.
        public let cursor: Int64
    }

    let configuration: Configuration
    private let channel: any Channel
    /// The connections' state, confined to the hub's one event loop (`state.value` checks that).
    let state: NIOLoopBoundBox<HubState>
    static let logger = Logger(label: "ambar.sync.hub")

    /// Binds the socket path again (after its file was removed).
    let rebind: @Sendable () -> EventLoopFuture<any Channel>

    private init(
        configuration: Configuration, channel: any Channel, state: NIOLoopBoundBox<HubState>,
        rebind: @escaping @Sendable () -> EventLoopFuture<any Channel>
    ) {
        self.configuration = configuration
        self.channel = channel
        self.state = state
        self.rebind = rebind
    }

    /// The server bootstrap of the hub's listener (each bind makes one).
    private static func makeBootstrap(
        configuration: Configuration, state: NIOLoopBoundBox<HubState>, listening descriptor: Int32
    ) -> ServerBootstrap {
        // The listener and every connection on the state's one loop.
        ServerBootstrap(group: state.eventLoop)
            .serverChannelOption(.backlog, value: 256)
            // At the descriptor limit, accepting fails at once for as long as connections wait:
            // they are refused through a reserve descriptor, and accepting backs off, instead of
            // being retried in a loop.
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DescriptorShortageHandler.acceptBackoff())
                    try channel.pipeline.syncOperations.addHandler(
                        DescriptorShortageHandler(listeningDescriptor: descriptor, maximumFrameSize: configuration.maximumFrameSize))
                }
            }
            .childChannelOption(
                .writeBufferWaterMark,
                value: .init(
                    low: configuration.maximumBacklogBytes / 2, high: configuration.maximumBacklogBytes)
            )
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(FrameDecoderHandler(maximumFrameSize: configuration.maximumFrameSize)),
                        HubConnectionHandler(state: state.value),  // on the state's loop: the only one
                    ])
                }
            }
    }

    /// Binds the socket (replacing a stale socket file) — or adopts
    /// ``Configuration/inheritedSocket`` — and starts serving.
    public static func start(_ configuration: Configuration) async throws -> SyncHub {
        let group = try configuration.eventLoopGroup ?? SharedEventLoops.group(for: "starting the hub", more: 8)
        let loop = group.next()
        let state = NIOLoopBoundBox.makeBoxSendingValue(HubState(configuration: configuration, eventLoop: loop), eventLoop: loop)
        SharingMetrics.hubPeers.record(0)
        do {
            let channel: any Channel
            if let inherited = configuration.inheritedSocket {
                channel = try await makeBootstrap(configuration: configuration, state: state, listening: inherited)
                    .withBoundSocket(inherited).get()
            } else {
                let fd = try UnixListeningSocket.bind(path: configuration.socketPath, backlog: 256)
                channel = try await makeBootstrap(configuration: configuration, state: state, listening: fd).withBoundSocket(fd).get()
                // Group members must be able to connect: a socket they cannot open would make
                // every other process poll, silently.
                if chmod(configuration.socketPath, 0o660) != 0 {
                    let reason = String(cString: strerror(errno))
                    try? await channel.close()  // try?: cleanup; the channel may be closed already
                    throw SocketSetupError.cannotSetMode(path: configuration.socketPath, reason: reason)
                }
            }
            logger.debug(
                "hub serving",
                metadata: [
                    "socket": "\(configuration.socketPath)", "store": "\(configuration.storeUUID)",
                    "activated": "\(configuration.inheritedSocket != nil)",
                ])
            let hub = SyncHub(
                configuration: configuration, channel: channel, state: state,
                rebind: {
                    do {
                        let fd = try UnixListeningSocket.bind(path: configuration.socketPath, backlog: 256)
                        return makeBootstrap(configuration: configuration, state: state, listening: fd).withBoundSocket(fd)
                    } catch {
                        return state.eventLoop.makeFailedFuture(error)
                    }
                })
            try await state.eventLoop.submit {
                state.value.listener = channel
                if configuration.inheritedSocket == nil { state.value.socketFile = FileIdentity(path: configuration.socketPath) }
            }.get()
            hub.watchSocketFile()
            return hub
        } catch {
            // (Nothing to shut down: the event loops are the group's, which outlives the hub.)
            throw error
        }
    }

    /// Why the hub could not start serving its socket.
    public enum SocketSetupError: Error, Sendable, CustomStringConvertible {
        /// The socket file's mode could not be set to 0660.
        case cannotSetMode(path: String, reason: String)
        public var description: String {
            switch self {
            case .cannotSetMode(let path, let reason):
                return "could not make the hub socket \(path) readable and writable by the store's group (chmod 0660: \(reason))"
            }
        }
    }

    /// Stops serving and closes every connection.
    public func stop() async {
        let state = self.state
        let path = configuration.socketPath
        // Closing a listener leaves the connections it accepted open: each is closed here (the
        // event loops are the group's and keep running, so nothing else would close them).
        let stopping = state.eventLoop.submit { () -> ((any Channel)?, [any Channel]) in
            let hub = state.value
            hub.stopped = true
            for task in hub.repeatedTasks { task.cancel() }
            hub.repeatedTasks = []
            return (hub.listener, hub.peers.values.map(\.channel))
        }
        // try?: the loop refuses work only once its group was shut down, and every channel with it
        let (listener, connections) = (try? await stopping.get()) ?? (nil, [])
        try? await (listener ?? channel).close()  // try?: cleanup; the listener may be closed already
        if listener != nil, listener !== channel { try? await channel.close() }  // try?: cleanup; the channel may be closed already
        for connection in connections { try? await connection.close() }  // try?: cleanup; the peer may have gone already
        // The socket file goes with the hub — unless it is no longer this hub's.
        // try?: as above; a loop that is gone leaves the socket file, which the next hub replaces
        let ours = try? await state.eventLoop.submit { state.value.socketFile != nil && FileIdentity(path: path) == state.value.socketFile }.get()
        if ours == true { unlink(path) }
    }

    /// Relays `frame` from the database server's doorbell to every connected process (a store on
    /// a server: the hub is its host's one listener).
    public func relayFromServer(_ frame: Frame) {
        let token: Int64
        let fallback: Frame
        switch frame {
        case .didSave(let save):
            token = save.token
            fallback = .tokenOnly(storeUUID: save.storeUUID, token: save.token, processID: save.processID, instanceID: save.instanceID)
        case .tokenOnly(_, let t, _, _):
            token = t
            fallback = frame
        case .foreignWrite:
            token = 0
            fallback = frame
        default:
            return
        }
        let bytes: [UInt8]
        do {
            bytes = try WireFormat.encode(frame, maximumFrameSize: configuration.maximumFrameSize)
        } catch {
            // Larger than the peers accept: the token alone rings the same bell.
            do { bytes = try WireFormat.encode(fallback) } catch {
                Self.logger.error("could not relay token \(token) from the database server: \(error)")
                return
            }
        }
        let state = self.state
        state.eventLoop.execute {
            state.value.relay(ByteBuffer(bytes: bytes), token: token, from: nil)
            state.value.flushRelayed()
        }
    }

    /// The processes connected now.
    public func peers() async -> [PeerInfo] {
        // try?: the loop refuses work only once its group was shut down: no peers are connected then
        (try? await state.eventLoop.submit { self.state.value.peerInfos() }.get()) ?? []
    }

    /// How many frames (relays and replies) were not sent because their receiver was not keeping
    /// up (each such receiver was then told to catch up from the ledger).
    public func droppedFrameCount() async -> Int {
        // try?: the loop refuses work only once its group was shut down: the hub relays nothing then
        (try? await state.eventLoop.submit { self.state.value.droppedFrames }.get()) ?? 0
    }

    /// Changes the most processes served at once; connections beyond it stay, new ones are refused.
    public func setMaximumPeers(_ maximum: Int) async {
        // try?: the loop refuses work only once its group was shut down: no peer can connect then
        try? await state.eventLoop.submit { self.state.value.maximumPeers = maximum }.get()
    }

    /// Runs `body` on the hub's event loop every `interval` (first after one interval), until the
    /// hub stops (the loop itself may belong to a group that outlives the hub).
    /// Because it runs on the loop that serves the peers, a stuck loop stops calling it — which is
    /// what a watchdog keep-alive needs.
    public func onEventLoop(every interval: Duration, _ body: @escaping @Sendable () -> Void) {
        let state = self.state
        state.eventLoop.execute {
            let hub = state.value
            guard !hub.stopped else { return }
            hub.repeatedTasks.append(
                state.eventLoop.scheduleRepeatedTask(initialDelay: TimeAmount(interval), delay: TimeAmount(interval)) { _ in body() })
        }
    }

    /// Whether the hub's event loop runs work given to it, and the hub has not stopped: `false`
    /// at once once it stopped; no answer while the loop is stuck (so that a watchdog check
    /// that waits for it stops the keep-alives).
    public func isServing() async -> Bool {
        let state = self.state
        // try?: the loop refuses work only once its group was shut down: not serving
        return (try? await state.eventLoop.submit { !state.value.stopped }.get()) ?? false
    }
}

/// The hub's connections: touched only on the hub's event loop, where the hub keeps it (in a
/// `NIOLoopBoundBox`, which checks so) and where its connection handlers run.
final class HubState {
    struct Peer {
        let channel: any Channel
        var hello: Frame.Hello?
        /// The highest token relayed from or to this peer.
        var lastToken: Int64 = 0
        /// Frames were dropped for this peer because it did not keep up; when it can take
        /// writes again it gets one `tokenOnly` with the newest token and catches up from the
        /// ledger.
        var fellBehind = false
        /// Closes the connection if no `hello` came in time.
        var handshakeDeadline: Scheduled<Void>?
    }

    let configuration: SyncHub.Configuration
    let eventLoop: any EventLoop
    var peers: [ObjectIdentifier: Peer] = [:]
    var maximumPeers: Int
    /// Peers written to since the last flush: relayed frames are flushed once per read burst, so
    /// a burst of saves goes to each receiver in one system call.
    var unflushed: Set<ObjectIdentifier> = []
    /// The newest token relayed to anyone.
    var newestToken: Int64 = 0
    /// Frames not relayed because their receiver was behind, since the hub started.
    var droppedFrames = 0
    /// The listening channel now (another one after the socket file was re-created).
    var listener: (any Channel)?
    /// The socket file the hub bound, as (device, inode); nil for an inherited socket.
    var socketFile: FileIdentity?
    /// Another socket took the hub's path: this hub no longer accepts.
    var displaced = false
    /// The hub was stopped.
    var stopped = false
    /// Work repeated on the hub's loop (``SyncHub/onEventLoop(every:_:)``), cancelled when it stops.
    var repeatedTasks: [RepeatedTask] = []
    /// Why the socket file could not be made again, as last logged (logged when it changes).
    var socketFileTrouble: String?

    init(configuration: SyncHub.Configuration, eventLoop: any EventLoop) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.maximumPeers = configuration.maximumPeers
    }

    /// Forwards a frame to every admitted peer but its sender (`nil`: a frame from the database
    /// server's doorbell, for every peer) and the peers the sender's bell woke already: those
    /// that hear the shared-memory bell the sender rings (``Frame/BellUse``), whose position
    /// is counted as relayed. A peer that does not take writes (more than
    /// ``SyncHub/Configuration/maximumBacklogBytes`` queued for it) is not sent the frame: the
    /// hub never queues without bound for a stalled or frozen process. That peer gets one
    /// `tokenOnly` when it drains, and reads what it missed from the ledger.
    func relay(_ bytes: ByteBuffer, token: Int64, from sender: ObjectIdentifier?) {
        // (Computed first: an optional-chained assignment begins its write access before the
        // right-hand side is evaluated.)
        if let sender {
            let senderToken = max(peers[sender]?.lastToken ?? 0, token)
            peers[sender]?.lastToken = senderToken
        }
        newestToken = max(newestToken, token)
        let senderBell = sender.flatMap { peers[$0]?.hello?.bell }
        for (key, peer) in peers where key != sender && peer.hello != nil {
            if peer.hello?.bell?.isRung(by: senderBell) == true {
                let peerToken = max(peer.lastToken, token)
                peers[key]?.lastToken = peerToken
                SharingMetrics.hubFramesLeftToTheBell.increment()
                continue
            }
            guard peer.channel.isWritable else {
                if !peer.fellBehind {
                    SyncHub.logger.warning(
                        "a peer is not keeping up; dropping its frames until it drains (it will catch up from the ledger)",
                        metadata: ["pid": "\(peer.hello?.processID ?? 0)"])
                }
                peers[key]?.fellBehind = true
                droppedFrames += 1
                SharingMetrics.hubDroppedFrames.increment()
                continue
            }
            peer.channel.write(bytes, promise: nil)
            SharingMetrics.hubRelayedFrames.increment()
            unflushed.insert(key)
            let peerToken = max(peer.lastToken, token)
            peers[key]?.lastToken = peerToken
        }
    }

    /// Flushes the peers written to since the last flush.
    func flushRelayed() {
        for key in unflushed { peers[key]?.channel.flush() }
        unflushed.removeAll(keepingCapacity: true)
    }

    /// Connections admitted by their hello.
    var admittedCount: Int { peers.values.count { $0.hello != nil } }
    /// Connections still waiting for their hello.
    var pendingCount: Int { peers.values.count { $0.hello == nil } }

    func peerEntries() -> [Frame.PeerEntry] {
        peers.values.compactMap { peer in
            peer.hello.map {
                Frame.PeerEntry(
                    processID: $0.processID, instanceID: $0.instanceID, processName: $0.processName,
                    connectCursor: $0.cursor, lastToken: max(peer.lastToken, $0.cursor))
            }
        }.sorted { ($0.processID, $0.instanceID) < ($1.processID, $1.instanceID) }
    }

    func peerInfos() -> [SyncHub.PeerInfo] {
        peers.values.compactMap { peer in
            peer.hello.map { SyncHub.PeerInfo(processID: $0.processID, processName: $0.processName, instanceID: $0.instanceID, cursor: $0.cursor) }
        }.sorted { ($0.processID, $0.instanceID) < ($1.processID, $1.instanceID) }
    }
}

/// One connection to the hub: handshake, then relay. Relayed frames are forwarded as the bytes
/// they came in; the hub's own replies are encoded here.
final class HubConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ReceivedFrame
    typealias OutboundOut = ByteBuffer
    private let state: HubState
    /// Who is at the other end of the connection (the kernel's answer for a Unix socket).
    private let credentials: (ChannelHandlerContext) -> PeerCredentials?

    /// A handler for one connection of the hub whose state is `state`; `credentials` tells who
    /// connected (tests over `EmbeddedChannel`, which has no socket, say it themselves).
    init(state: HubState, credentials: @escaping (ChannelHandlerContext) -> PeerCredentials? = HubConnectionHandler.socketCredentials) {
        self.state = state
        self.credentials = credentials
    }

    /// The credentials of the process at the other end of the connection's Unix socket.
    static func socketCredentials(_ context: ChannelHandlerContext) -> PeerCredentials? {
        // try?: a channel without a socket has no credentials, and is refused for it
        try? context.pipeline.syncOperations.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) { fd in
            PeerCredentials.of(fd)
        } ?? nil
    }

    /// Encodes and sends one of the hub's own frames (replies are small: they always fit). Like
    /// relays, replies respect the backlog bound: to a peer that does not read, nothing more is
    /// queued (the peer is marked as fallen behind and told to catch up once it drains).
    private func reply(_ context: ChannelHandlerContext, _ frame: Frame) {
        guard context.channel.isWritable else {
            state.droppedFrames += 1
            SharingMetrics.hubDroppedFrames.increment()
            state.peers[ObjectIdentifier(context.channel)]?.fellBehind = true
            return
        }
        do {
            let bytes = try context.channel.allocator.frame(frame, maximumFrameSize: state.configuration.maximumFrameSize)
            context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
        } catch {
            SyncHub.logger.error("could not encode a reply: \(error)")
        }
    }

    /// Sends an `error` frame and closes the connection (one small frame, then the connection is
    /// gone: bounded whatever the peer does).
    private func refuse(_ context: ChannelHandlerContext, _ code: Frame.ErrorCode, _ message: String) {
        SyncHub.logger.warning("refused peer: \(message)")
        SharingMetrics.hubRefusedConnections.increment()
        let channel = context.channel
        do {
            let bytes = try channel.allocator.frame(.error(code: code, message: message), maximumFrameSize: state.configuration.maximumFrameSize)
            context.writeAndFlush(wrapOutboundOut(bytes)).whenComplete { _ in channel.close(promise: nil) }
        } catch {
            channel.close(promise: nil)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        // Accepted as the hub stops (after it collected the connections to close): not kept.
        guard !state.stopped else { return context.close(promise: nil) }
        guard let credentials = credentials(context) else {
            return refuse(context, .notPermitted, "the hub cannot read the peer's credentials")
        }
        guard credentials.isAllowed(owner: state.configuration.allowedOwner, group: state.configuration.allowedGroup) else {
            return refuse(
                context, .notPermitted,
                "uid \(credentials.userID) (gid \(credentials.groupID)) is neither the store's owner \(state.configuration.allowedOwner) nor in its group \(state.configuration.allowedGroup)"
            )
        }
        guard state.pendingCount < state.configuration.maximumPendingHandshakes else {
            return refuse(
                context, .tooManyPeers, "\(state.configuration.maximumPendingHandshakes) connections are already waiting for their handshake; try again")
        }
        let channel = context.channel
        let timeout = state.configuration.handshakeTimeout
        // On this loop, the state's: the task may hold it without crossing threads.
        let deadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) { [state] in
            guard let peer = state.peers[ObjectIdentifier(channel)], peer.hello == nil else { return }
            SyncHub.logger.warning("closing a connection that sent no hello within \(timeout)")
            channel.close(promise: nil)
        }
        state.peers[ObjectIdentifier(channel)] = HubState.Peer(channel: channel, hello: nil, handshakeDeadline: deadline)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.peers[ObjectIdentifier(context.channel)]?.handshakeDeadline?.cancel()
        if state.peers.removeValue(forKey: ObjectIdentifier(context.channel))?.hello != nil {
            SharingMetrics.hubPeers.record(state.admittedCount)
        }
        state.unflushed.remove(ObjectIdentifier(context.channel))
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let key = ObjectIdentifier(context.channel)
        if context.channel.isWritable, state.peers[key]?.fellBehind == true {
            state.peers[key]?.fellBehind = false
            SyncHub.logger.debug(
                "a peer that fell behind drained; telling it to catch up from the ledger",
                metadata: ["pid": "\(state.peers[key]?.hello?.processID ?? 0)", "token": "\(state.newestToken)"])
            reply(context, .tokenOnly(storeUUID: state.configuration.storeUUID, token: state.newestToken, processID: 0, instanceID: 0))
        }
        context.fireChannelWritabilityChanged()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushRelayed()
        context.fireChannelReadComplete()
    }

    private func flushRelayed() { state.flushRelayed() }

    private func relay(_ bytes: ByteBuffer, token: Int64, from sender: ObjectIdentifier) {
        state.relay(bytes, token: token, from: sender)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let received = unwrapInboundIn(data)
        let frame = received.frame
        let key = ObjectIdentifier(context.channel)
        guard let peer = state.peers[key] else { return }
        guard let hello = peer.hello else {
            switch Handshake.verdict(on: frame, storeUUID: state.configuration.storeUUID) {
            case .refuse(let code, let reason):
                return refuse(context, code, reason)
            case .admit(let hello):
                guard state.admittedCount < state.maximumPeers else {
                    return refuse(context, .tooManyPeers, "the hub already serves \(state.maximumPeers) processes")
                }
                state.peers[key]?.hello = hello
                SharingMetrics.hubPeers.record(state.admittedCount)
                state.peers[key]?.handshakeDeadline?.cancel()
                state.peers[key]?.handshakeDeadline = nil
            }
            let others = state.admittedCount - 1
            reply(context, .welcome(.init(hubProcessID: getpid(), peers: UInt32(max(0, others)))))
            return
        }
        switch frame {
        case .didSave(let save):
            guard save.storeUUID == hello.storeUUID else { return refuse(context, .wrongStore, "did-save for another store") }
            relay(received.bytes, token: save.token, from: key)
        case .tokenOnly(let uuid, let token, _, _):
            guard uuid == hello.storeUUID else { return refuse(context, .wrongStore, "token for another store") }
            relay(received.bytes, token: token, from: key)
        case .foreignWrite:
            // Only the hub itself reports writes made outside Ambar (from the database server's
            // listener it holds, `relayFromServer`); a peer that sends one would make every
            // process re-read everything it holds, so it is refused, never relayed.
            refuse(context, .malformed, "a process may not report foreign writes; only the hub does, from the database server's listener")
        case .ping(let n):
            reply(context, .pong(n))
        case .peersRequest:
            reply(context, .peers(state.peerEntries()))
        case .pong:
            break
        case .hello, .welcome, .error, .peers:
            refuse(context, .malformed, "unexpected frame after the handshake")
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        flushRelayed()  // what this peer sent before the bad frame still goes out
        SyncHub.logger.warning("closing a connection: \(error)")
        if let wire = error as? WireError {
            refuse(context, .malformed, wire.description)
        } else {
            context.close(promise: nil)
        }
    }
}
