import ArgumentParser

/// The agent's HTTP side (`serve`, and `--metrics` of `hub`, `run`, `watch` and `serve`), which the
/// package trait `HTTP` builds in (a default trait: `swift build` has it; `scripts/run-demo` builds
/// the SQLite demo without it, which spares a first build Hummingbird and swift-prometheus).
///
/// An agent built without it refuses `serve` and `--metrics` at once, saying how to build one that
/// has it.
enum HTTPSupport {
    /// Whether this build of the agent serves HTTP.
    static var isBuiltIn: Bool {
        #if HTTP
            true
        #else
            false
        #endif
    }

    /// The usage error of an agent built without HTTP, given `what` (`serve`, `--metrics`).
    static func notBuiltIn(_ what: String) -> ValidationError {
        ValidationError(
            "\(what): this sync-agent was built without HTTP (its package trait HTTP was off). Build one with it: `swift build -c release --product sync-agent` (the default traits)."
        )
    }
}
