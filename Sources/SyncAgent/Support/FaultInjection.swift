import Foundation

/// Crash points for tests of crash safety, armed only by `AMBAR_FAULT_INJECTION=<point>`: the
/// process exits at once (status 86) at that point, as if it were killed there. Unset in
/// production, each point is one environment lookup.
enum FaultInjection {
    /// The exit status of an injected crash.
    static let exitStatus: Int32 = 86

    /// Exits the process when `name` is the armed point.
    static func point(_ name: String) {
        guard ProcessInfo.processInfo.environment["AMBAR_FAULT_INJECTION"] == name else { return }
        _exit(exitStatus)
    }

    /// Blocks the calling thread for good when `name` is the armed point: a part that never
    /// finishes (a statement a database server never answers), for tests of the bounds around it.
    static func hang(_ name: String) {
        guard ProcessInfo.processInfo.environment["AMBAR_FAULT_INJECTION"] == name else { return }
        while true { pause() }
    }
}
