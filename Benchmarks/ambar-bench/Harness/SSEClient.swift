import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A client of `sync-agent serve`'s `/v1/changes` on NIO (HTTP/1.1), recording when each event's
/// `id:` arrives.
struct SSEClient: Sendable {
    let channel: any Channel
    let recorder: ArrivalRecorder

    /// Opens `count` streams on `port`: even ones unfiltered, odd ones filtered on one of
    /// `filters` predicates (`celsius >= 0`, `>= 10`, …). Reading ones are returned once each has
    /// its position (the stream's first `id:`); others never read a byte.
    static func open(count: Int, filters: Int, port: Int, group: any EventLoopGroup, reading: Bool) async throws -> [SSEClient] {
        var clients: [SSEClient] = []
        for index in 0..<count {
            let predicate = "celsius >= \((index / 2) % filters * 10)"
            let path =
                index % 2 == 0
                ? "/v1/changes" : "/v1/changes?entity=Reading&where=" + (predicate.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? predicate)
            let recorder = ArrivalRecorder()
            let channel = try await ClientBootstrap(group: group)
                .channelOption(.autoRead, value: reading)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(SSEHandler(recorder: recorder, path: path, port: port))
                    }
                }
                .connect(host: "127.0.0.1", port: port).get()
            clients.append(SSEClient(channel: channel, recorder: recorder))
        }
        guard reading else { return clients }
        let deadline = now() + 60_000_000_000
        while !clients.allSatisfy({ $0.recorder.highest >= 0 }) {
            guard now() < deadline else { throw BenchError("not every change stream began within 60 s") }
            try await Task.sleep(for: .milliseconds(10))
        }
        return clients
    }

    /// Closes `clients`' connections.
    static func close(_ clients: [SSEClient]) async throws {
        for client in clients { try? await client.channel.close() }
    }
}

/// When each token's `id:` arrived (CLOCK_MONOTONIC ns), on one client.
final class ArrivalRecorder: Sendable {
    private let state = NIOLockedValueBox((arrivals: [Int64: Int64](), highest: Int64(-1)))

    func record(_ token: Int64, at time: Int64) {
        state.withLockedValue { state in
            if state.arrivals[token] == nil { state.arrivals[token] = time }
            state.highest = max(state.highest, token)
        }
    }

    var arrivals: [Int64: Int64] { state.withLockedValue { $0.arrivals } }
    /// The highest token seen, -1 before the stream's first event.
    var highest: Int64 { state.withLockedValue { $0.highest } }
}

/// Sends the stream's request once connected, and finds the `id:` lines in its body.
private final class SSEHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let recorder: ArrivalRecorder
    private let path: String
    private let port: Int
    /// The start of a line that the last body part ended in (only its first bytes matter).
    private var pending: [UInt8] = []

    init(recorder: ArrivalRecorder, path: String, port: Int) {
        self.recorder = recorder
        self.path = path
        self.port = port
    }

    func channelActive(context: ChannelHandlerContext) {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
        head.headers.add(name: "Host", value: "127.0.0.1:\(port)")
        head.headers.add(name: "Accept", value: "text/event-stream")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .body(let buffer) = unwrapInboundIn(data) else { return }
        let arrived = now()
        let recorder = self.recorder
        // Only each line's start is read: memchr skips the (long) data lines, so that at a
        // thousand streams this client costs little beside serve.
        pending = buffer.withUnsafeReadableBytes { bytes -> [UInt8] in
            guard let base = bytes.baseAddress else { return pending }
            var offset = 0
            var pending = self.pending
            while offset < bytes.count {
                let newline = memchr(base + offset, Int32(UInt8(ascii: "\n")), bytes.count - offset).map { base.distance(to: UnsafeRawPointer($0)) }
                let lineEnd = newline ?? bytes.count
                let start = UnsafeRawBufferPointer(rebasing: bytes[offset..<min(lineEnd, offset + Self.prefix)])
                guard newline != nil else {
                    pending += start.prefix(Self.prefix - pending.count)
                    break
                }
                let token: Int64?
                if pending.isEmpty {
                    token = Self.token(start)
                } else {
                    pending += start.prefix(Self.prefix - pending.count)
                    token = pending.withUnsafeBytes { Self.token($0) }
                    pending.removeAll(keepingCapacity: true)
                }
                if let token { recorder.record(token, at: arrived) }
                offset = lineEnd + 1
            }
            return pending
        }
    }

    /// How much of a line's start is read.
    private static let prefix = 32

    /// The token of an `id: TOKEN` line (given its first bytes, without its newline), else nil.
    private static func token(_ line: UnsafeRawBufferPointer) -> Int64? {
        guard line.count > 4, line[0] == UInt8(ascii: "i"), line[1] == UInt8(ascii: "d"), line[2] == UInt8(ascii: ":"), line[3] == UInt8(ascii: " ") else {
            return nil
        }
        var value: Int64 = 0
        for digit in line[4...] {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        return value
    }
}
