import Foundation
import Logging
import NIOCore
import NIOPosix

/// A connection from a process to the hub: sends this process's did-save messages and delivers
/// the others'.
public final class SyncClient: Sendable {
    /// Why a connection attempt failed.
    public enum ConnectError: Error, Sendable, Equatable {
        /// The hub refused the handshake, with its reason.
        case refused(Frame.ErrorCode, String)
        /// The hub closed the connection before answering.
        case closedBeforeWelcome
        /// The hub accepted the connection but did not answer `hello` in time (it may be frozen
        /// or overloaded); the connection was closed.
        case noWelcome(after: Duration)
        /// The process listening on the socket is not one this client trusts as the hub (see
        /// ``HubTrust``): nothing was sent to it and the connection was closed. The text says
        /// whose process it is and what to do.
        case untrustedHub(String)
    }

    private let channel: any Channel
    private let maximumFrameSize: Int
    /// The default bound on what is queued for the hub: 4 MiB.
    public static let defaultMaximumSendBacklogBytes = 4 << 20

    /// What the hub said when it accepted this process.
    public let welcome: Frame.Welcome
    static let logger = Logger(label: "ambar.sync.client")

    /// The newest doorbell not queued while the send side was full, sent once it drains.
    private let catchUp: CatchUpDoorbell

    private init(channel: any Channel, welcome: Frame.Welcome, maximumFrameSize: Int, catchUp: CatchUpDoorbell) {
        self.catchUp = catchUp
        self.channel = channel
        self.welcome = welcome
        self.maximumFrameSize = maximumFrameSize
    }

    /// Connects to the hub at `socketPath` and completes the handshake.
    ///
    /// The handshake has a deadline: a hub that accepts the connection but does not answer
    /// within `welcomeTimeout` (a frozen process still accepts connections) is given up on, and
    /// cancelling the calling task gives up at once. Either way the connection is closed.
    ///
    /// ```swift
    /// let client = try await SyncClient.connect(
    ///     socketPath: path, hello: Frame.Hello(storeUUID: uuid, processID: getpid(), instanceID: ProcessInstance.id, processName: "probe", cursor: 0),
    ///     group: group, onFrame: { frame in print(frame) }, onClose: {})
    /// try client.send(.peersRequest)
    /// ```
    ///
    /// - Parameters:
    ///   - socketPath: the hub's Unix socket.
    ///   - hello: this process's hello (protocol version, store, process ID, instance, name and cursor).
    ///   - group: the event loop group the connection runs on.
    ///   - maximumFrameSize: the largest frame accepted from the hub, length field included.
    ///   - welcomeTimeout: how long to wait for `welcome` after connecting.
    ///   - maximumSendBacklogBytes: the most bytes queued for a hub that does not read; past it
    ///     ``send(_:)`` sends nothing and returns `false`.
    ///   - trustedHub: whose process is accepted as the hub, checked from the socket's peer
    ///     credentials before `hello` is sent; by default root and this process's user.
    ///   - onFrame: called, on the connection's event loop, with each frame after the handshake.
    ///   - onClose: called once when the connection ends.
    /// - Throws: a socket error when nothing listens at the path, ``ConnectError``, or
    ///   `CancellationError` when the task was cancelled.
    public static func connect(
        socketPath: String, hello: Frame.Hello, group: any EventLoopGroup,
        maximumFrameSize: Int = WireFormat.defaultMaximumFrameSize,
        welcomeTimeout: Duration = .seconds(2),
        maximumSendBacklogBytes: Int = defaultMaximumSendBacklogBytes,
        trustedHub: HubTrust = .currentUser,
        onFrame: @escaping @Sendable (Frame) -> Void, onClose: @escaping @Sendable () -> Void
    ) async throws -> SyncClient {
        try Task.checkCancellation()
        let eventLoop = group.next()
        let welcomePromise = eventLoop.makePromise(of: Frame.Welcome.self)
        let catchUp = CatchUpDoorbell(maximumFrameSize: maximumFrameSize)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(.milliseconds(500))
                .channelOption(.writeBufferWaterMark, value: .init(low: maximumSendBacklogBytes / 2, high: maximumSendBacklogBytes))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            ByteToMessageHandler(FrameDecoderHandler(maximumFrameSize: maximumFrameSize)),
                            ClientHandler(
                                hello: hello, trust: trustedHub, maximumFrameSize: maximumFrameSize, welcome: welcomePromise, catchUp: catchUp,
                                onFrame: onFrame, onClose: onClose),
                        ])
                    }
                }
                .connect(unixDomainSocketPath: socketPath)
                .get()
        } catch {
            // Nothing listens: the handler (and its promise) never came to life.
            welcomePromise.fail(error)
            throw error
        }
        let deadline = eventLoop.scheduleTask(in: TimeAmount(welcomeTimeout)) {
            welcomePromise.fail(ConnectError.noWelcome(after: welcomeTimeout))
        }
        do {
            let welcome = try await withTaskCancellationHandler {
                try await welcomePromise.futureResult.get()
            } onCancel: {
                welcomePromise.fail(CancellationError())
            }
            deadline.cancel()
            return SyncClient(channel: channel, welcome: welcome, maximumFrameSize: maximumFrameSize, catchUp: catchUp)
        } catch {
            deadline.cancel()
            try? await channel.close()  // try?: cleanup; the channel may be closed already
            throw error
        }
    }

    /// Sends a frame (thread-safe; does not wait). It is encoded here, on the caller's thread.
    ///
    /// What is queued for a hub that does not read is bounded: once more than the connection's
    /// `maximumSendBacklogBytes` (4 MiB by default: a burst of saves to a live hub fits) is
    /// queued, frames are not queued and this returns `false`. The newest doorbell refused so is
    /// kept, as a `tokenOnly` frame, and sent as soon as the send side drains: the others then
    /// read the ledger through it at once, instead of at their next periodic check.
    ///
    /// - Returns: whether the frame was queued.
    /// - Throws: ``WireError/frameTooLarge(announced:maximum:)`` when it exceeds the connection's
    ///   maximum frame size (send a ``Frame/tokenOnly(storeUUID:token:processID:instanceID:)``
    ///   instead); nothing is sent then.
    @discardableResult
    public func send(_ frame: Frame) throws(WireError) -> Bool {
        let bytes = try channel.allocator.frame(frame, maximumFrameSize: maximumFrameSize)
        guard channel.isWritable else {
            // On the event loop (which owns the kept doorbell), after any writability change
            // already queued there: a send side that drained meanwhile sends it now; otherwise
            // the handler does when it drains.
            let (channel, catchUp) = (self.channel, self.catchUp)
            channel.eventLoop.execute {
                catchUp.keep(frame)
                catchUp.send(on: channel)
            }
            return false
        }
        channel.writeAndFlush(bytes, promise: nil)
        return true
    }

    /// Runs `work` on the connection's event loop, in order with the frames sent: before any
    /// frame ``send(_:)`` queues after this call.
    func execute(_ work: @escaping @Sendable () -> Void) {
        channel.eventLoop.execute(work)
    }

    /// Whether the connection is open.
    public var isActive: Bool { channel.isActive }

    /// Waits until the connection ends, however it ends. Cancelling the waiting task closes the
    /// connection (and so ends the wait).
    ///
    /// ```swift
    /// await client.waitUntilClosed()   // then reconnect, or give up
    /// ```
    public func waitUntilClosed() async {
        let channel = self.channel
        await withTaskCancellationHandler {
            try? await channel.closeFuture.get()  // try?: a failed close is a close all the same
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    /// Closes the connection.
    public func close() async {
        try? await channel.close()  // try?: cleanup; the channel may be closed already
    }

    /// Starts closing the connection without waiting for it (``waitUntilClosed()`` returns
    /// once it is closed).
    func beginClosing() {
        channel.close(promise: nil)
    }
}

/// The newest doorbell a full send side refused, reduced to its token (a `tokenOnly` frame: the
/// receivers read the ledger through it), until the send side drains. Used only on the channel's
/// event loop, which is what makes it safe to share.
final class CatchUpDoorbell: @unchecked Sendable {
    private var pending: Frame?
    private let maximumFrameSize: Int

    init(maximumFrameSize: Int) { self.maximumFrameSize = maximumFrameSize }

    /// Keeps `frame`'s token if it is newer than the one kept.
    func keep(_ frame: Frame) {
        guard let hint = frame.reducedToToken, let newToken = hint.announcedToken else { return }
        if let keptToken = pending?.announcedToken, keptToken >= newToken { return }
        pending = hint
    }

    /// Sends the kept doorbell if the send side has room (on the channel's event loop).
    func send(on channel: any Channel) {
        guard channel.isWritable, let frame = pending else { return }
        pending = nil
        do {
            channel.writeAndFlush(try channel.allocator.frame(frame, maximumFrameSize: maximumFrameSize), promise: nil)
        } catch {
            SyncClient.logger.error("could not encode the catch-up doorbell \(frame): \(error)")
        }
    }
}

final class ClientHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ReceivedFrame
    typealias OutboundOut = ByteBuffer
    private let hello: Frame.Hello
    private let trust: HubTrust
    private let maximumFrameSize: Int
    private var welcome: EventLoopPromise<Frame.Welcome>?
    private let catchUp: CatchUpDoorbell
    private let onFrame: @Sendable (Frame) -> Void
    private let onClose: @Sendable () -> Void

    init(
        hello: Frame.Hello, trust: HubTrust, maximumFrameSize: Int, welcome: EventLoopPromise<Frame.Welcome>, catchUp: CatchUpDoorbell,
        onFrame: @escaping @Sendable (Frame) -> Void, onClose: @escaping @Sendable () -> Void
    ) {
        self.catchUp = catchUp
        self.hello = hello
        self.trust = trust
        self.maximumFrameSize = maximumFrameSize
        self.welcome = welcome
        self.onFrame = onFrame
        self.onClose = onClose
    }

    /// Sends one of the client's own frames (hello, pong: small, they always fit).
    private func send(_ context: ChannelHandlerContext, _ frame: Frame) {
        do {
            context.writeAndFlush(wrapOutboundOut(try context.channel.allocator.frame(frame, maximumFrameSize: maximumFrameSize)), promise: nil)
        } catch {
            SyncClient.logger.error("could not encode \(frame): \(error); closing the hub connection")
            context.close(promise: nil)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        // Who listens is checked before anything is sent: a socket another user planted gets
        // neither the hello nor any did-save.
        let credentials =
            // try?: credentials that cannot be read are a refusal below, which says so
            try? context.pipeline.syncOperations.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) { fd in
                PeerCredentials.of(fd)
            } ?? nil
        let refusal: String? =
            if let credentials {
                trust.admits(credentials) ? nil : trust.refusal(of: credentials)
            } else {
                "the credentials of the process listening on the hub's socket cannot be read; nothing was sent to it"
            }
        if let refusal {
            welcome?.fail(SyncClient.ConnectError.untrustedHub(refusal))
            welcome = nil
            context.close(promise: nil)
            return
        }
        send(context, .hello(hello))
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data).frame
        if let promise = welcome {
            welcome = nil
            switch frame {
            case .welcome(let w): promise.succeed(w)
            case .error(let code, let message): promise.fail(SyncClient.ConnectError.refused(code, message))
            default: promise.fail(SyncClient.ConnectError.refused(.malformed, "the hub did not answer hello with welcome"))
            }
            return
        }
        if case .ping(let n) = frame {
            send(context, .pong(n))
            return
        }
        onFrame(frame)
    }

    /// The send side drained: the doorbell refused meanwhile goes out now.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        catchUp.send(on: context.channel)
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        welcome?.fail(SyncClient.ConnectError.closedBeforeWelcome)
        welcome = nil
        onClose()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        SyncClient.logger.warning("closing the hub connection: \(error)")
        context.close(promise: nil)
    }
}
