import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// Workload 12's baseline (the `fanout-raw` child role): the physical path of a change stream
/// without the library. A bare NIO HTTP/1.1 server answers every request with a server-sent-events
/// stream; the bench process tells it each transaction's token on stdin, and it sends one event
/// of the shape serve sends for a one-object insert to every open stream, on each connection's
/// own event loop (one loop per core). Events that arrive while a loop is still writing the last
/// ones wait and go together (one write and flush per stream per round, as serve joins what waits
/// in a stream's queue): without that, a thousand streams at 500 events/s fall seconds behind. No
/// bell, no ledger read, no encoding, no filter, no per-stream queue: what serve measures above
/// this is what the library adds.
///
/// Protocol: it prints `port N` once listening; each stdin line is a token to send, `quit` ends it.
enum RawFanOut {
    static func serve() throws -> Never {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let loops = Array(group.makeIterator())
        let streams = Dictionary(uniqueKeysWithValues: loops.map { (ObjectIdentifier($0), LoopStreams()) })
        let channel = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    let own = streams[ObjectIdentifier(channel.eventLoop)] ?? LoopStreams()
                    try channel.pipeline.syncOperations.addHandler(EventStreamHandler(streams: own))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        say("port \(channel.localAddress?.port ?? 0)")
        while let line = readLine() {
            guard let token = Int64(line) else { break }
            let event = ByteBuffer(
                string:
                    "id: \(token)\nevent: change\ndata: {\"token\":\(token),\"inserted\":[\"x-ambar://6F9619FF-8B86-D011-B42D-00C04FC964FF/Reading/p\(token)\"],\"updated\":[],\"deleted\":[]}\n\n"
            )
            for loop in loops {
                guard let own = streams[ObjectIdentifier(loop)], own.enqueue(event) else { continue }
                // No round is scheduled on this loop: schedule one, which sends all that waits.
                loop.execute {
                    let joined = own.takeWaiting()
                    for channel in own.channels {
                        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(joined)), promise: nil)
                    }
                }
            }
        }
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
        exit(0)
    }
}

/// The open streams of one event loop, read and changed only on that loop, and the events
/// waiting for its next round (under a lock: the stdin thread adds them).
private final class LoopStreams: @unchecked Sendable {
    private var open: [ObjectIdentifier: any Channel] = [:]
    private let waiting = NIOLockedValueBox(ByteBuffer())

    /// Adds `event` to what waits; true when nothing waited (a round must be scheduled).
    func enqueue(_ event: ByteBuffer) -> Bool {
        waiting.withLockedValue { waiting in
            var event = event
            let first = waiting.readableBytes == 0
            waiting.writeBuffer(&event)
            return first
        }
    }

    /// What waits, leaving nothing.
    func takeWaiting() -> ByteBuffer {
        waiting.withLockedValue { waiting in
            defer { waiting = ByteBuffer() }
            return waiting
        }
    }

    var channels: Dictionary<ObjectIdentifier, any Channel>.Values { open.values }

    func add(_ channel: any Channel) { open[ObjectIdentifier(channel)] = channel }
    func remove(_ channel: any Channel) { open[ObjectIdentifier(channel)] = nil }
}

/// Answers a request with an event stream that begins with `id: 0` and joins its loop's streams.
private final class EventStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let streams: LoopStreams

    init(streams: LoopStreams) { self.streams = streams }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/event-stream")
        headers.add(name: "Cache-Control", value: "no-store")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "id: 0\n\n")))), promise: nil)
        streams.add(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        streams.remove(context.channel)
        context.fireChannelInactive()
    }
}
