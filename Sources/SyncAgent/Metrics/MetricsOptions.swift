import ArgumentParser

/// `--metrics ADDRESS`: serve the process's metrics in Prometheus's text format (`hub`, `run`,
/// `watch`, `serve`).
struct MetricsOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve metrics in Prometheus's text format at http://ADDRESS/metrics.",
            discussion:
                "ADDRESS is HOST:PORT (127.0.0.1:9464; port 0 picks a free one), [IPv6]:PORT, or unix:PATH. The address is printed to standard error once it listens. Any address other than a Unix socket, a numeric loopback address or localhost requires --metrics-token-file (the metrics name the store's consumers).",
            valueName: "ADDRESS"))
    var metrics: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A file holding the bearer token scrapers must send to --metrics (required off loopback).",
            discussion: "Prometheus sends it with `authorization: { credentials_file: FILE }` in its scrape config; LoadCredential= in a unit.",
            valueName: "FILE"))
    var metricsTokenFile: String?

    func validate() throws {
        guard let metrics else { return }
        guard HTTPSupport.isBuiltIn else { throw HTTPSupport.notBuiltIn("--metrics") }
        let address = try ListenAddress(parsing: metrics, option: "--metrics")
        if !address.isLocal && metricsTokenFile == nil {
            throw ValidationError(
                "--metrics \(address) is reachable from other machines: give --metrics-token-file FILE (a bearer token), or keep it on loopback or a Unix socket"
            )
        }
    }

    /// The endpoint to serve, with swift-metrics bootstrapped to Prometheus, or nil without
    /// `--metrics`. Call it first in a command's `run()`: metrics created before it record
    /// nothing.
    func endpoint(command: String) throws -> MetricsEndpoint? {
        guard let metrics else { return nil }
        #if HTTP
            return MetricsEndpoint(
                address: try ListenAddress(parsing: metrics, option: "--metrics"), command: command,
                token: try metricsTokenFile.map { try BearerTokenFile.read($0, option: "--metrics-token-file") })
        #else
            throw HTTPSupport.notBuiltIn("--metrics")
        #endif
    }
}
