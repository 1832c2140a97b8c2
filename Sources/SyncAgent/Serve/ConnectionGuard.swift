// Built with the package trait HTTP (a default trait).
#if HTTP
    import HTTPTypes
    import HummingbirdCore
    import Logging
    import NIOConcurrencyHelpers
    import NIOCore
    import NIOHTTPTypes

    /// Limits on `serve`'s connections that hold before any request is read or authenticated,
    /// one handler per connection (after HTTP decoding):
    ///
    /// - At most ``Limits/maximumConnections`` are open at once; one more is closed as it is
    ///   accepted, so that idle sockets cannot run the process out of descriptors.
    /// - A request's head (its line and headers) must arrive whole within
    ///   ``Limits/headerTimeout`` of the connection opening or of the last response ending:
    ///   a client that sends its headers a byte at a time (slowloris), or keeps an idle
    ///   connection, is closed. A response under way (a change stream) is never cut by it.
    /// - A client that hangs up (closes its side) while a response streams is closed at once,
    ///   which ends the stream and frees the descriptor; otherwise only the next write would have
    ///   found it gone, up to the next keep-alive comment 15 s later.
    final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart

        /// The limits, shared by every connection of one server.
        struct Limits: Sendable {
            /// How many connections may be open at once.
            var maximumConnections = 1_024
            /// How long a request's head may take to arrive.
            var headerTimeout: TimeAmount = .seconds(10)
        }

        /// The count of open connections, shared by every connection's handler.
        final class Count: Sendable {
            private let open = NIOLockedValueBox(0)

            /// Counts one more if fewer than `maximum` are open.
            func admit(below maximum: Int) -> Bool {
                open.withLockedValue { open in
                    guard open < maximum else { return false }
                    open += 1
                    return true
                }
            }

            func release() { open.withLockedValue { $0 -= 1 } }

            /// How many are open.
            var current: Int { open.withLockedValue { $0 } }
        }

        /// HTTP/1.1 with a guard on each connection over `limits` (counted in `count`), and
        /// limits on the request's head: the request line and each header field at most 160 KB, and
        /// the fields at most 160 KB together (a `where` of 5,000 `OR`s fits, to be refused by
        /// the store with a 400 that says why), at most 100 fields; past them the connection is
        /// closed.
        static func http1(limits: Limits, count: Count, logger: Logger) -> HTTP1Channel.Configuration {
            HTTP1Channel.Configuration(
                additionalChannelHandlers: [ConnectionGuard(limits: limits, count: count, logger: logger)], idleTimeout: nil,
                httpDecoderConfiguration: .init(maxHeaderFieldSize: 160 * 1024, maxHeaderListSize: 160 * 1024, maxHeaderFieldCount: 100))
        }

        private let limits: Limits
        private let count: Count
        private let logger: Logger
        private var admitted = false
        private var deadline: Scheduled<Void>?
        private var responding = false
        private var streaming = false
        private var inputClosed = false

        init(limits: Limits, count: Count, logger: Logger) {
            self.limits = limits
            self.count = count
            self.logger = logger
        }

        func handlerAdded(context: ChannelHandlerContext) {
            guard count.admit(below: limits.maximumConnections) else {
                logger.warning(
                    "too many connections; one more was closed as it opened",
                    metadata: ["limit": "\(limits.maximumConnections)", "client": "\(context.remoteAddress.map { "\($0)" } ?? "unix socket")"])
                context.close(promise: nil)
                return
            }
            admitted = true
            armDeadline(context: context)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            deadline?.cancel()
            deadline = nil
            if admitted {
                admitted = false
                count.release()
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            deadline?.cancel()
            deadline = nil
            context.fireChannelInactive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head = unwrapInboundIn(data) {
                deadline?.cancel()
                deadline = nil
                responding = true
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .head(let response):
                streaming = response.headerFields[.contentType]?.hasPrefix("text/event-stream") ?? false
                context.write(data, promise: promise)
                // A stream to a client that has already hung up: nobody reads it.
                if streaming && inputClosed { context.channel.close(promise: nil) }
            case .body:
                context.write(data, promise: promise)
            case .end:
                responding = false
                streaming = false
                guard !inputClosed else {
                    // The client sends nothing more: this response is the last.
                    let channel = context.channel
                    let written = promise ?? context.eventLoop.makePromise()
                    context.write(data, promise: written)
                    written.futureResult.whenComplete { _ in channel.close(promise: nil) }
                    return
                }
                armDeadline(context: context)
                context.write(data, promise: promise)
            }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .inputClosed = event as? ChannelEvent {
                inputClosed = true
                // Hung up during a stream, or between requests: nothing will read or ask again. A
                // response other than a stream is still sent whole (then the connection closes).
                if !responding || streaming {
                    context.close(promise: nil)
                    return
                }
            }
            context.fireUserInboundEventTriggered(event)
        }

        private func armDeadline(context: ChannelHandlerContext) {
            deadline?.cancel()
            let timeout = limits.headerTimeout
            let channel = context.channel
            deadline = context.eventLoop.scheduleTask(in: timeout) { [logger] in
                logger.debug("no request within the header timeout; connection closed", metadata: ["timeout": "\(timeout)"])
                channel.close(promise: nil)
            }
        }
    }
#endif
