// Built with the package trait HTTP (a default trait).
#if HTTP
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdCore
    import Logging
    import NIOCore
    import NIOPosix
    import ServiceLifecycle

    #if TLS
        import HummingbirdTLS
    #endif

    /// The HTTP server on a listening socket the service manager passed (socket activation), which
    /// Hummingbird's `Application` cannot adopt: the same router, served by Hummingbird's HTTP/1.1
    /// channel on a NIO server channel made from the descriptor. At graceful shutdown it stops
    /// accepting and lets the requests in progress finish (change streams end at shutdown).
    struct AdoptedSocketServer: Service {
        let descriptor: Int32
        let responder: RouterResponder<ServeContext>
        /// TLS settings when it serves HTTPS.
        let tls: ServeTLS.Settings?
        let serverName: String
        /// The HTTP/1.1 configuration: the connection guard and the limits on a request's head.
        let http1: HTTP1Channel.Configuration
        let logger: Logger
        /// Called with the server channel once it accepts connections.
        let onServerRunning: @Sendable (any Channel) async -> Void

        func run() async throws {
            let (responder, serverName, logger) = (self.responder, self.serverName, self.logger)
            let http = HTTP1Channel(
                responder: { request, writer, channel in
                    let context = ServeContext(source: .init(channel: channel, logger: logger))
                    var response: Response
                    do {
                        response = try await responder.respond(to: request, context: context)
                    } catch {
                        logger.debug("a request failed", metadata: ["error": "\(error)"])
                        response = Response(status: .internalServerError)
                    }
                    response.headers[.server] = serverName
                    try await writer.write(response: response.head, body: response.body)
                }, configuration: http1)
            #if TLS
                if let tls {
                    try await serve(TLSChannel(http, tlsConfiguration: tls))
                    return
                }
            #endif
            try await serve(http)
        }

        /// Accepts connections on the adopted descriptor and serves each through `child`.
        private func serve<Child: ServerChildChannel>(_ child: Child) async throws {
            let logger = self.logger
            let server = try await ServerBootstrap(group: try AgentEventLoops.group(for: "serving the passed socket"))
                .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
                .bind(descriptor) { channel in child.setup(channel: channel, logger: logger) }
            await onServerRunning(server.channel)
            try await withThrowingDiscardingTaskGroup { group in
                try await withGracefulShutdownHandler {
                    try await server.executeThenClose { connections in
                        for try await connection in connections {
                            group.addTask { await child.handle(value: connection, logger: logger) }
                        }
                    }
                } onGracefulShutdown: {
                    server.channel.close(promise: nil)  // stop accepting; the connections in progress finish
                }
            }
        }
    }
#endif
