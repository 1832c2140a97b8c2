import Foundation
import Logging

/// The process-wide log level, shared by every handler the agent bootstraps, so a configuration
/// reload (SIGHUP) changes it for all loggers at once.
public final class LogLevelControl: @unchecked Sendable {
    /// The instance the agent's handlers read.
    public static let shared = LogLevelControl(.info)

    // A pthread lock (not `Synchronization.Mutex`, which ThreadSanitizer cannot see on Linux).
    private let lock = NSLock()
    private var storage: Logger.Level

    /// A control starting at `level`.
    public init(_ level: Logger.Level) { storage = level }

    /// The current level.
    public var level: Logger.Level {
        get { lock.withLock { storage } }
        set { lock.withLock { storage = newValue } }
    }
}
