import Foundation
import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps a hub at its limit on open files from spinning on `accept`: when accepting fails with
/// EMFILE or ENFILE, the connections waiting are taken with a descriptor held in reserve for the
/// purpose, each told why in an `error` frame (`tooManyPeers`, so that its process backs off and
/// follows the ledger meanwhile) and closed, until none waits. Without it, the listening socket
/// stays readable and the event loop retries the failed `accept` for as long as connections wait
/// — a core's worth of CPU — while the admitted peers are served as usual either way.
///
/// Another thread can take the descriptor freed for `accept` (the reserve is then lost until one
/// is free again): the hub's listener also backs off after each failed `accept`
/// (``acceptBackoff()``), so that it never spins, reserve or not, and the reserve is taken again
/// at the next shortage that leaves one free.
final class DescriptorShortageHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = Any

    private let listeningDescriptor: Int32
    private let openReserve: @Sendable () -> Int32
    private var reserve: Int32
    private let maximumFrameSize: Int
    private var refusedSinceLog = 0
    private var lastLog: ContinuousClock.Instant?
    static let logger = Logger(label: "ambar.sync.hub")

    /// How long the listener waits before it accepts again after `accept` failed.
    static let backoff = TimeAmount.milliseconds(100)

    /// NIO's handler that delays the listener's next `accept` by ``backoff`` after one failed;
    /// before this handler in the listener's pipeline, so that this one still sees the error.
    static func acceptBackoff() -> AcceptBackoffHandler {
        AcceptBackoffHandler(shouldForwardIOErrorCaught: true) { _ in backoff }
    }

    /// Opens a descriptor to hold in reserve (`/dev/null`); -1 when none is free.
    static let openDevNull: @Sendable () -> Int32 = { open("/dev/null", O_RDONLY | O_CLOEXEC) }

    /// For the listener on `listeningDescriptor` (a descriptor the hub owns); `openReserve` opens
    /// the reserve descriptor.
    init(listeningDescriptor: Int32, maximumFrameSize: Int, openReserve: @escaping @Sendable () -> Int32 = DescriptorShortageHandler.openDevNull) {
        self.listeningDescriptor = listeningDescriptor
        self.maximumFrameSize = maximumFrameSize
        self.openReserve = openReserve
        reserve = openReserve()
    }

    /// Whether a descriptor is held in reserve now.
    var holdsReserve: Bool { reserve >= 0 }

    deinit {
        if reserve >= 0 { close(reserve) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        handleError(error, fire: { context.fireErrorCaught($0) })
    }

    /// Refuses the waiting connections when `error` is a shortage of descriptors; passes any
    /// other error on with `fire`.
    func handleError(_ error: any Error, fire: (any Error) -> Void) {
        guard let io = error as? IOError, io.errnoCode == EMFILE || io.errnoCode == ENFILE else {
            return fire(error)
        }
        let refused = refuseWaitingConnections()
        refusedSinceLog += refused
        SharingMetrics.hubRefusedConnections.increment(by: refused)
        let now = ContinuousClock.now
        if lastLog.map({ now - $0 >= .seconds(10) }) ?? true {
            Self.logger.error(
                "the hub is out of file descriptors: refused \(refusedSinceLog) connection(s) waiting (they follow the ledger and retry); the processes admitted are served as usual. Raise the limit (LimitNOFILE=) if this lasts",
                metadata: ["errno": "\(io.errnoCode)"])
            refusedSinceLog = 0
            lastLog = now
        }
    }

    /// Accepts and refuses every connection waiting, through the reserve descriptor; returns how many.
    private func refuseWaitingConnections() -> Int {
        if reserve < 0 { reserve = openReserve() }  // lost at an earlier shortage: free again now?
        guard reserve >= 0 else { return 0 }
        var refused = 0
        let frame =
            // try?: a short fixed message always fits a frame; without it the connection is only closed
            (try? WireFormat.encode(
                .error(
                    code: .tooManyPeers, message: "the hub has no file descriptor left for this connection; retry later (processes follow the ledger meanwhile)"
                ),
                maximumFrameSize: maximumFrameSize)) ?? []
        while refused < 1024 {
            close(reserve)
            let connection = accept(listeningDescriptor, nil, nil)  // non-blocking: NIO made the listener so
            if connection >= 0 {
                _ = frame.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
                refused += 1
            }
            reserve = openReserve()
            if connection < 0 || reserve < 0 { break }  // none waits any more (EAGAIN), or the reserve is lost
        }
        return refused
    }
}
