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
    }

    private let channel: any Channel
    /// What the hub said when it accepted this process.
    public let welcome: Frame.Welcome
    static let logger = Logger(label: "ambar.sync.client")

    private init(channel: any Channel, welcome: Frame.Welcome) {
        self.channel = channel
        self.welcome = welcome
    }

    /// Connects to the hub at `socketPath` and completes the handshake.
    ///
    /// - Parameters:
    ///   - onFrame: called, on the connection's event loop, with each frame after the handshake.
    ///   - onClose: called once when the connection ends.
    /// - Throws: a socket error when nothing listens at the path, or ``ConnectError``.
    public static func connect(
        socketPath: String, hello: Frame.Hello, group: any EventLoopGroup,
        maximumFrameSize: Int = WireFormat.defaultMaximumFrameSize,
        onFrame: @escaping @Sendable (Frame) -> Void, onClose: @escaping @Sendable () -> Void
    ) async throws -> SyncClient {
        let eventLoop = group.next()
        let welcomePromise = eventLoop.makePromise(of: Frame.Welcome.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
            .connectTimeout(.milliseconds(500))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(FrameDecoderHandler(maximumFrameSize: maximumFrameSize)),
                        MessageToByteHandler(FrameEncoderHandler(maximumFrameSize: maximumFrameSize)),
                        ClientHandler(hello: hello, welcome: welcomePromise, onFrame: onFrame, onClose: onClose),
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
        do {
            let welcome = try await welcomePromise.futureResult.get()
            return SyncClient(channel: channel, welcome: welcome)
        } catch {
            try? await channel.close()
            throw error
        }
    }

    /// Sends a frame (thread-safe; does not wait).
    public func send(_ frame: Frame) {
        channel.writeAndFlush(frame, promise: nil)
    }

    /// Whether the connection is open.
    public var isActive: Bool { channel.isActive }

    /// Closes the connection.
    public func close() async {
        try? await channel.close()
    }
}

final class ClientHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = Frame
    typealias OutboundOut = Frame
    private let hello: Frame.Hello
    private var welcome: EventLoopPromise<Frame.Welcome>?
    private let onFrame: @Sendable (Frame) -> Void
    private let onClose: @Sendable () -> Void

    init(hello: Frame.Hello, welcome: EventLoopPromise<Frame.Welcome>, onFrame: @escaping @Sendable (Frame) -> Void, onClose: @escaping @Sendable () -> Void) {
        self.hello = hello
        self.welcome = welcome
        self.onFrame = onFrame
        self.onClose = onClose
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(.hello(hello)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
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
            context.writeAndFlush(wrapOutboundOut(.pong(n)), promise: nil)
            return
        }
        onFrame(frame)
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
