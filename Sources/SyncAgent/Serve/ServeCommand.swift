import AmbarCore
import AmbarDataStack
import AmbarSystemd
import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SharedStoreIPC

#if HTTP
    import Hummingbird
#endif

/// `sync-agent serve`: the store over HTTP/1.1 (Hummingbird), for clients in any language — the
/// change stream as Server-Sent Events, objects, and status.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the store over HTTP: a resumable change stream (Server-Sent Events), objects and status.",
        discussion: """
            GET /v1/changes — one Server-Sent Event per ledger transaction: "id:" is its token, "data:" \
            the object `watch --json` prints plus "objects" (each inserted and updated object as \
            `fetch --json` prints it). It resumes after the Last-Event-ID header, else after ?after=TOKEN, \
            else at the ledger's head: across reconnects exactly the ledger's transactions, in order. \
            Its first event is that position alone ("id:" with no "data:"). A start whose history is \
            purged is a 410 whose JSON names after, purged_through, oldest_token and head_token; history \
            purged while it streams is an "expired" event with the same fields, then the stream ends. One \
            reader follows the ledger for every stream: each transaction's objects are read and \
            encoded once, each distinct filter evaluated once. A client that reads more slowly than \
            transactions commit is not disconnected: past --stream-queue bytes waiting for it (or \
            --stream-queue-total for all streams) its queue is dropped, and its stream reads the ledger \
            on its own from where it is until it has caught up.
            GET /v1/changes?entity=E&where=FORMAT[&entity=F&where=FORMAT…][&snapshot=true] — a filtered \
            stream: "upsert" events ({"objects", "token"}: touched objects that match now) and "remove" \
            events ({"ids", "token"}: touched objects that do not match now, or were deleted); only a \
            transaction's last event carries "id:", and one that touches nothing followed sends "id:" \
            alone. Applied in order, they hold what `fetch --predicate` returns. A where reads only the \
            object's own values (400 otherwise). snapshot=true, without a position to resume from, \
            starts with a "reset" event and every matching object (which ones: read with the ledger \
            head it then follows from; their values: read in batches as they are sent).
            GET /v1/objects/ENTITY?predicate=FORMAT&sort=KEY[:desc]&limit=N — a page of the matching \
            objects as a JSON array: limit of them (default 1000, at most 10000), ties broken by primary \
            key; while more remain, a Link rel="next" header gives the next page (an opaque cursor for \
            this query). A bad format is a 400 with "error" and "position".
            GET /v1/status — the object `status --json` prints (made again after each commit, otherwise at most once a second however many ask; the hub's peers asked at most every 2 s).
            Ambar-After: TOKEN on /v1/objects and /v1/status — read your writes: the answer is read once \
            this server holds transaction TOKEN (a save's token, an event's id), or is a 504 with "error", \
            "token" and "held_through" after 5 s.
            GET /v1/latency — commit → merged latency in this process over the last 10 minutes (at most 20,000 merges): \
            {"window_seconds", "points": [{"at" (Unix seconds), "token", "latency_ms"}]}.
            GET / — a live status page for a browser (the ledger, the hub and its peers, consumers and their \
            lag, inboxes, objects, a latency plot, transactions as they commit); served without the token, \
            it asks for one when the server requires it (or takes it from http://HOST:PORT/#token=TOKEN).
            It listens on a Unix socket (unix:PATH, default <directory>/.ambar/http.sock) or HOST:PORT. \
            Any address other than a Unix socket, a numeric loopback address (127.0.0.0/8, ::1) or \
            localhost requires --token-file (a name is never taken for loopback by its look: \
            127.example.com needs the token): every request must \
            then carry "Authorization: Bearer <the file's content>" (else 401, logged without the token, \
            at most once a minute per client address). \
            Without a token it answers only requests whose Host is localhost or a loopback address \
            (--allowed-host NAME for another) and refuses requests a page of another origin makes \
            (--allowed-origin ORIGIN to allow one), so that no web page can read it (DNS rebinding). \
            With --tls-certificate and --tls-key it serves HTTPS, TLS 1.2 or newer (the token rule is unchanged). \
            Under systemd it is Type=notify: READY once it listens, STOPPING on SIGTERM, when open \
            streams end and it exits 0. Socket-activated, it serves the socket named "http" \
            (FileDescriptorName=http in the .socket unit) instead of --listen, with the same token rule.
            """)

    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var socket: SocketOptions
    @OptionGroup var metricsOptions: MetricsOptions

    @Option(name: .long, help: "unix:PATH, HOST:PORT or [IPv6]:PORT (default: unix:<directory>/.ambar/http.sock).")
    var listen: String?

    @Option(name: .long, help: "A file holding the bearer token clients must send (required off loopback; LoadCredential= in a unit).")
    var tokenFile: String?

    @Option(name: .long, help: "A PEM file with the server's certificate chain: serve HTTPS (with --tls-key).")
    var tlsCertificate: String?

    @Option(name: .long, help: "A PEM file with the certificate's private key (with --tls-certificate; LoadCredential= in a unit).")
    var tlsKey: String?

    @Option(
        name: .long,
        help:
            "Bytes of events that may wait for one change-stream client; past them its queue is dropped and its stream reads the ledger on its own until it catches up."
    )
    var streamQueue = StreamMemory.defaultPerStream

    @Option(
        name: .long,
        help:
            "Bytes of events that may wait for all change-stream clients together, the same events waiting for several counted once (past them, as --stream-queue)."
    )
    var streamQueueTotal = StreamMemory.defaultLimit

    @Option(
        name: .long,
        help: "The threads that read the store, evaluate predicates and encode objects for requests and streams (a pool of their own; more reads wait).")
    var readThreads = StoreReadPool.defaultThreads

    @Option(name: .long, help: "How many change streams may be open at once; one more is answered 503 with Retry-After.")
    var maxStreams = StreamSlots.defaultMaximum

    @Option(name: .long, help: "How many connections may be open at once; one more is closed as it opens, before any request is read.")
    var maxConnections = 1_024

    @Option(
        name: .long,
        help: "Seconds a connection may take to send a request's line and headers, from opening or from the end of the last response; then it is closed.")
    var headerTimeout = 10

    @Option(
        name: .long,
        help: "Without --token-file, also answer requests whose Host is NAME (besides localhost and loopback addresses); repeatable.")
    var allowedHost: [String] = []

    @Option(
        name: .long,
        help: "Without --token-file, let pages from ORIGIN (scheme://host[:port]) read the answers (besides the server's own); repeatable.")
    var allowedOrigin: [String] = []

    func validate() throws {
        guard HTTPSupport.isBuiltIn else { throw HTTPSupport.notBuiltIn("serve") }
        let address = try listenAddress()
        if !address.isLocal && tokenFile == nil {
            throw ValidationError(
                "--listen \(address) is reachable from other machines: give --token-file FILE (a bearer token), or listen on loopback or a Unix socket")
        }
        guard streamQueue >= 64 * 1024 else { throw ValidationError("--stream-queue must be at least 65536 bytes") }
        guard streamQueueTotal >= streamQueue else { throw ValidationError("--stream-queue-total must be at least --stream-queue") }
        guard maxStreams >= 1 else { throw ValidationError("--max-streams must be at least 1") }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        guard headerTimeout >= 1 else { throw ValidationError("--header-timeout must be at least 1 second") }
        guard (1...256).contains(readThreads) else { throw ValidationError("--read-threads takes 1 to 256, not \(readThreads)") }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-certificate and --tls-key go together: give both to serve HTTPS, or neither")
        }
    }

    private func listenAddress() throws -> ListenAddress {
        try ListenAddress(parsing: listen ?? "unix:" + directory.url.appendingPathComponent(".ambar/http.sock").path)
    }

    /// The token in `--token-file`, without surrounding whitespace; refused when empty or unreadable.
    private func token() throws -> String? {
        try tokenFile.map { try BearerTokenFile.read($0, option: "--token-file") }
    }

    func run() async throws {
        #if HTTP
            let metrics = try metricsOptions.endpoint(command: "serve")
            bootstrapLogging()
            let logger = Logger(label: "ambar.agent.serve")
            let address = try listenAddress()
            let token = try token()
            let tls = try ServeTLS.settings(certificate: tlsCertificate, key: tlsKey)
            let scheme = tls == nil ? "" : " (HTTPS)"
            let stack = try openExistingStack(directory)
            if let metrics {
                let coordinator = try stack.mainCoordinator
                metrics.collect { LedgerMetrics.collect(coordinator) }
            }
            let sync = try await SharedStoreSync.start(stack: stack, configuration: try socket.sharing(in: directory.url, as: "sync-agent serve"))
            try DescriptorBudget.require(16, for: "starting the HTTP server")  // the listener and its first connections

            // Without a token, only requests sent to this machine by name, from no other page.
            let localGuard = token == nil ? LocalRequestGuard(allowedHosts: allowedHost, allowedOrigins: allowedOrigin) : nil
            let reads = StoreReadPool(threads: readThreads)
            let broadcast = ChangeBroadcast(sync: sync, stack: stack, reads: reads, logger: logger)
            let router = ServeRouter.make(
                stack: stack, sync: sync, reads: reads, streams: StreamSlots(maximum: maxStreams), broadcast: broadcast,
                memory: StreamMemory(perStream: streamQueue, limit: streamQueueTotal), token: token, localGuard: localGuard,
                directory: directory,
                socketPath: socket.path(in: directory.url))

            let http1 = ConnectionGuard.http1(
                limits: .init(maximumConnections: maxConnections, headerTimeout: .seconds(Int64(headerTimeout))), count: ConnectionGuard.Count(),
                logger: logger)
            let listening = AsyncStream<Void>.makeStream()
            let server: any Service
            if let adopted = try SocketActivation.listeningStreamSocket(named: "http") {
                // Socket activation: the .socket unit's `http` socket (FileDescriptorName=http).
                guard let bound = ListenAddress(boundSocket: adopted) else {
                    throw ValidationError("the socket passed as \"http\" is neither a Unix nor an IP socket")
                }
                if !bound.isLocal && token == nil {
                    throw ValidationError("the socket passed as \"http\" (\(bound)) is reachable from other machines: give --token-file FILE")
                }
                if listen != nil { logger.notice("socket-activated: serving the passed socket, not --listen", metadata: ["socket": "\(bound)"]) }
                server = AdoptedSocketServer(
                    descriptor: adopted, responder: router.buildResponder(), tls: tls, serverName: "ambar-sync-agent", http1: http1, logger: logger,
                    onServerRunning: { _ in
                        FileHandle.standardError.write(Data("sync-agent serve: listening on \(bound)\(scheme) (socket-activated)\n".utf8))
                        listening.continuation.yield()
                    })
            } else {
                let bind: BindAddress
                switch address {
                case .unix(let path):
                    try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
                    bind = .unixDomainSocket(path: path)
                case .tcp(let host, let port):
                    bind = .hostname(host, port: port)
                }
                server = Application(
                    router: router, server: try ServeTLS.server(tls, http1: http1),
                    configuration: .init(address: bind, serverName: "ambar-sync-agent"),
                    onServerRunning: { channel in
                        let actual =
                            channel.localAddress?.port.map { port -> String in
                                if case .tcp(let host, _) = address { return ListenAddress.tcp(host: host, port: port).description }
                                return address.description
                            } ?? address.description
                        FileHandle.standardError.write(Data("sync-agent serve: listening on \(actual)\(scheme)\n".utf8))
                        listening.continuation.yield()
                    }, eventLoopGroupProvider: .shared(try AgentEventLoops.group(for: "starting the HTTP server")), logger: logger)
            }
            let systemd = SystemdNotifyService(
                readiness: { for await _ in listening.stream { break } },
                status: { "serving \(address)\(scheme)\(token == nil ? "" : " (bearer token required)"); ledger at \(sync.mergedThrough)" })
            let deadline = ShutdownDeadline(logger: logger)
            defer { withExtendedLifetime(deadline) {} }
            let beside = try metrics.map { [try $0.service(logger: logger)] } ?? []
            let group = ServiceGroup(
                services: [reads, sync, broadcast, server, systemd] + beside, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            try await group.run()
        #else
            throw HTTPSupport.notBuiltIn("serve")
        #endif
    }
}
