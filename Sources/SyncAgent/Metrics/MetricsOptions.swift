import ArgumentParser

/// `--metrics ADDRESS`: serve the process's metrics in Prometheus's text format (`hub`, `run`,
/// `watch`, `serve`).
struct MetricsOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve metrics in Prometheus's text format at http://ADDRESS/metrics.",
            discussion:
                "ADDRESS is HOST:PORT (127.0.0.1:9464; port 0 picks a free one), [IPv6]:PORT, or unix:PATH. The address is printed to standard error once it listens. Keep it on loopback or a Unix socket unless a firewall guards it: the metrics name the store's consumers.",
            valueName: "ADDRESS"))
    var metrics: String?

    func validate() throws {
        guard let metrics else { return }
        guard HTTPSupport.isBuiltIn else { throw HTTPSupport.notBuiltIn("--metrics") }
        _ = try ListenAddress(parsing: metrics, option: "--metrics")
    }

    /// The endpoint to serve, with swift-metrics bootstrapped to Prometheus, or nil without
    /// `--metrics`. Call it first in a command's `run()`: metrics created before it record
    /// nothing.
    func endpoint(command: String) throws -> MetricsEndpoint? {
        guard let metrics else { return nil }
        #if HTTP
            return MetricsEndpoint(address: try ListenAddress(parsing: metrics, option: "--metrics"), command: command)
        #else
            throw HTTPSupport.notBuiltIn("--metrics")
        #endif
    }
}
