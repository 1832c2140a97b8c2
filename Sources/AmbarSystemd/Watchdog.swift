import CSystemd

/// The service manager's watchdog (sd_watchdog_enabled(3)).
public enum Watchdog {
    /// The interval at which to send keep-alives — half of `WatchdogSec=` — or `nil` when no
    /// watchdog is armed for this process (`$WATCHDOG_USEC` unset, or `$WATCHDOG_PID` names
    /// another process).
    public static var keepAliveInterval: Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(microseconds / 2))
    }
}
