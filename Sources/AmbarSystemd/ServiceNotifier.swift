import CSystemd
import Foundation

/// One state change reported to the service manager (sd_notify(3)).
public enum ServiceState: Sendable, Equatable {
    /// Start-up (or a reload) is finished: the service is serving.
    case ready
    /// The service is reloading its configuration; `ready` follows when it is done.
    case reloading
    /// The service is shutting down.
    case stopping
    /// A watchdog keep-alive.
    case watchdog
    /// A one-line, human-readable status that `systemctl status` shows.
    case status(String)

    /// The `KEY=value` assignment sd_notify(3) expects.
    public var assignment: String {
        switch self {
        case .ready: "READY=1"
        case .reloading: "RELOADING=1"
        case .stopping: "STOPPING=1"
        case .watchdog: "WATCHDOG=1"
        case .status(let text): "STATUS=" + text.replacingOccurrences(of: "\n", with: " ")
        }
    }
}

/// Tells the service manager about the service's state through `$NOTIFY_SOCKET`.
///
/// Without `$NOTIFY_SOCKET` (not started by systemd with `Type=notify`) every call is a no-op, so
/// the same binary runs unchanged from a terminal.
public enum ServiceNotifier {
    /// Whether a service manager listens for notifications.
    public static var isSupervised: Bool {
        ProcessInfo.processInfo.environment["NOTIFY_SOCKET"].map { !$0.isEmpty } ?? false
    }

    /// Sends `states` as one datagram; returns whether a service manager received it.
    @discardableResult
    public static func notify(_ states: ServiceState...) -> Bool {
        notify(states)
    }

    /// Sends `states` as one datagram; returns whether a service manager received it.
    @discardableResult
    public static func notify(_ states: [ServiceState]) -> Bool {
        guard !states.isEmpty else { return false }
        let message = states.map(\.assignment).joined(separator: "\n")
        return sd_notify(0, message) > 0
    }
}
