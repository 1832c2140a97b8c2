// Built with the package trait HTTP (a default trait); without it, `--metrics` is refused.
#if HTTP
    import AmbarCore
    import AmbarDataStack
    import CoreMetrics
    import Foundation
    import HTTPTypes
    import Hummingbird
    import Logging
    import NIOCore
    import Prometheus
    import ServiceLifecycle

    /// The process's metrics in Prometheus's text format at `GET /metrics`, from the swift-metrics
    /// that AmbarStack, SharedStoreIPC and the agent record, bootstrapped to a Prometheus registry.
    ///
    /// Gauges that describe the store (the ledger, the consumers' lag) are read when the endpoint is
    /// scraped, by the collectors added with ``collect(_:)``.
    final class MetricsEndpoint: Sendable {
        let address: ListenAddress
        let command: String
        /// The bearer token a scrape must send, if any.
        let token: String?
        let registry: PrometheusCollectorRegistry
        private let collectors = Locked<[@Sendable () -> Void]>([])

        /// Bootstraps swift-metrics to a new Prometheus registry (once per process).
        init(address: ListenAddress, command: String, token: String? = nil) {
            self.address = address
            self.command = command
            self.token = token
            let registry = PrometheusCollectorRegistry()
            var factory = PrometheusMetricsFactory(registry: registry)
            // Commit → merged latencies and save durations: 1 ms to 10 s.
            factory.defaultDurationHistogramBuckets = [
                .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
                .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
            ]
            MetricsSystem.bootstrap(factory)
            self.registry = registry
        }

        /// Adds a collector, run before each scrape.
        func collect(_ collector: @escaping @Sendable () -> Void) {
            collectors.withLock { $0.append(collector) }
        }

        /// The text a scrape returns. The collectors read the store, which may block (a database
        /// server that is slow to answer), so they run on a dispatch queue, not on the server's
        /// threads.
        func scrape() async -> [UInt8] {
            let collectors = self.collectors.withLock { $0 }
            let registry = self.registry
            return await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    for collector in collectors { collector() }
                    continuation.resume(returning: MetricsHelp.annotate(registry.emitToBuffer()))
                }
            }
        }

        /// The HTTP server, as a service to run beside the command's own.
        func service(logger: Logger) throws -> any Service {
            let router = Router(context: ServeContext.self)
            if let token { router.add(middleware: BearerTokenMiddleware(token: token)) }
            router.get("/metrics") { [self] _, _ -> Response in
                let body = await scrape()
                var headers = HTTPFields()
                headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
            }
            let bind: BindAddress
            switch address {
            case .unix(let path):
                try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
                // A socket left by an earlier run is replaced; any other file there is an error.
                // try?: nothing there is not a socket: binding says what is wrong
                if (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeSocket {
                    try FileManager.default.removeItem(atPath: path)
                }
                bind = .unixDomainSocket(path: path)
            case .tcp(let host, let port):
                bind = .hostname(host, port: port)
            }
            let address = self.address
            let command = self.command
            return Application(
                router: router, configuration: .init(address: bind, serverName: "ambar-sync-agent-metrics"),
                onServerRunning: { channel in
                    // http://HOST:PORT/metrics (the port bound), or unix:PATH (GET /metrics on it).
                    let actual: String
                    if case .tcp(let host, _) = address, let port = channel.localAddress?.port {
                        actual = "http://\(ListenAddress.tcp(host: host, port: port))/metrics"
                    } else {
                        actual = address.description
                    }
                    FileHandle.standardError.write(Data("sync-agent \(command): metrics at \(actual)\n".utf8))
                }, eventLoopGroupProvider: .shared(try AgentEventLoops.group(for: "starting the metrics endpoint")), logger: logger)
        }
    }
#else
    import Logging
    import ServiceLifecycle

    /// Without the package trait HTTP there is no metrics endpoint: ``MetricsOptions`` refuses
    /// `--metrics` before one would be made, so the commands' metrics paths never run.
    final class MetricsEndpoint: Sendable {
        private init() {}

        /// Does nothing: there is no endpoint to collect for.
        func collect(_ collector: @escaping @Sendable () -> Void) {}

        /// Refuses, as `--metrics` is: this build has no HTTP server.
        func service(logger: Logger) throws -> any Service {
            throw HTTPSupport.notBuiltIn("--metrics")
        }
    }
#endif
