import AmbarStack
import Foundation

/// How a process shares its store with the other processes of a shared directory.
public struct SharingConfiguration: Sendable {
    /// The shared directory (the Linux analogue of an app group).
    public var directory: URL
    /// The hub socket. When `nil`: `$AMBAR_SOCKET` if set (the unit files set it to the .socket
    /// unit's path), else `<directory>/.ambar/sync.sock`.
    public var socketPath: String?
    /// How often to look at the ledger while no hub is reachable.
    public var pollInterval: TimeInterval = 0.25
    /// The name under which this process's ledger cursor is kept; by default
    /// `<process>-<pid>-<instance in base 36>`, removed when sharing stops. A named consumer keeps
    /// its position across restarts (and holds history back while it is within its lease).
    public var consumerName: String?
    /// The largest frame sent or accepted.
    public var maximumFrameSize = WireFormat.defaultMaximumFrameSize
    /// Whether this process may serve the hub itself when none answers (default `true`). Set it to
    /// `false` for short-lived or low-priority processes, so that the hub stays with long-lived
    /// ones (or a dedicated `sync-agent hub`); such a process polls the ledger until a hub answers.
    public var mayServeHub = true
    /// How long the ledger keeps history, consumers' cursors and idempotency receipts. The process
    /// serving the hub (this one, when elected) purges by it on a schedule; every process records
    /// its position at least every quarter of `HistoryRetention.consumerLease`, so give the
    /// processes of one directory the same value.
    public var retention = HistoryRetention.standard
    /// How long to wait for the hub's `welcome` after connecting. A hub that does not answer in
    /// time (frozen, overloaded) is treated as absent: this process polls the ledger and tries
    /// again with a growing delay.
    public var welcomeTimeout: Duration = .seconds(2)
    /// While connected, how often the ledger is read anyway (doorbells are hints; a lost one
    /// costs at most this long).
    public var ledgerCheckInterval: Duration = .seconds(2)
    /// Whether the rows of the objects other processes inserted and updated are read as soon as
    /// their transactions are found in the ledger, on the thread that follows it (default
    /// `true`). The merge on the main queue then reads nothing from the store, and a results
    /// controller there finds the inserted objects already read: the main queue only applies.
    ///
    /// Set it to `false` for a process that holds few of the store's objects and lists none of
    /// them: it then reads, on the main queue, only the rows of the objects it holds. Pages of
    /// the ledger that name more than 10,000 objects are never read ahead.
    public var readsChangedRowsAhead = true

    /// Sharing through `directory` with every default.
    public static func sharedDirectory(_ directory: URL) -> SharingConfiguration {
        SharingConfiguration(directory: directory)
    }

    /// Creates a configuration.
    public init(directory: URL, socketPath: String? = nil, pollInterval: TimeInterval = 0.25, consumerName: String? = nil) {
        self.directory = directory
        self.socketPath = socketPath
        self.pollInterval = pollInterval
        self.consumerName = consumerName
    }

    var resolvedSocketPath: String { socketPath ?? Self.defaultSocketPath(in: directory) }

    /// The hub socket when none is configured: `$AMBAR_SOCKET` if set, else
    /// `<directory>/.ambar/sync.sock`.
    public static func defaultSocketPath(in directory: URL, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let fromEnvironment = environment["AMBAR_SOCKET"], !fromEnvironment.isEmpty { return fromEnvironment }
        return directory.appendingPathComponent(".ambar/sync.sock").path
    }

    var resolvedConsumerName: String {
        consumerName ?? "\(ProcessInfo.processInfo.processName)-\(getpid())-\(String(ProcessInstance.id, radix: 36))"
    }

    /// Whether the consumer name is this process's own (the default): its cursor then means
    /// nothing once the process ends, and is removed when it stops.
    var consumerNameIsPerProcess: Bool { consumerName == nil }
}
