import Logging
import Synchronization

/// The process-wide log level, shared by every handler the agent bootstraps, so a configuration
/// reload (SIGHUP) changes it for all loggers at once.
public final class LogLevelControl: Sendable {
    /// The instance the agent's handlers read.
    public static let shared = LogLevelControl(.info)

    private let storage: Mutex<Logger.Level>

    /// A control starting at `level`.
    public init(_ level: Logger.Level) { storage = Mutex(level) }

    /// The current level.
    public var level: Logger.Level {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
