import AmbarCore
import AmbarDataStack
import Foundation
import NIOCore

/// How a process shares its store with the other processes of a shared directory.
public struct SharingConfiguration: Sendable {
    /// The shared directory (the Linux analogue of an app group).
    public var directory: URL
    /// The hub socket. When `nil`: `$AMBAR_SOCKET` if set (the unit files set it to the .socket
    /// unit's path), else `<directory>/.ambar/sync.sock`.
    public var socketPath: String?
    /// How often to look at the ledger while no hub is reachable.
    public var pollInterval: TimeInterval = 0.25
    /// The name under which this process's merge position is kept in the store (shown by
    /// `sync-agent status` and `sync-agent consumers`); by default
    /// `<process>-<pid>-<instance in base 36>`.
    ///
    /// A merge position is where this process's main context has merged to. It never resumes:
    /// each start begins at the ledger's head (what the main context loads is current), and
    /// sharing removes it when it stops. It holds history back only while the process lives: at
    /// most `HistoryRetention/processLease` (two minutes by default) after the process last
    /// recorded it, which a live process does at least every quarter of that lease; a killed
    /// process's position is then removed by the next purge. For work that must resume where
    /// it stopped, exactly once, use a durable consumer (`ChangeConsumer`).
    public var mergePositionName: String?
    /// The former name of ``mergePositionName``. It never made a durable consumer: a process
    /// sharing a store always starts merging at the ledger's head.
    @available(*, deprecated, renamed: "mergePositionName", message: "a merge position never resumes; use ChangeConsumer for a durable position")
    public var consumerName: String? {
        get { mergePositionName }
        set { mergePositionName = newValue }
    }
    /// How this process names itself to the hub, which lists it under that name among its peers
    /// (`sync-agent status`, the status page); nil (the default) is the executable's name. Name
    /// the role, for people: `"orders-notifier"`, `"sync-agent run orders"`.
    public var processName: String?
    /// The largest frame sent or accepted.
    public var maximumFrameSize = WireFormat.defaultMaximumFrameSize
    /// Whether this process may serve the hub itself when none answers (default `true`). Set it to
    /// `false` for short-lived or low-priority processes, so that the hub stays with long-lived
    /// ones (or a dedicated `sync-agent hub`); such a process polls the ledger until a hub answers.
    public var mayServeHub = true
    /// How long the ledger keeps history, consumers' positions and idempotency receipts. The
    /// process serving the hub (this one, when elected) purges by it on a schedule; every process
    /// records its merge position with `HistoryRetention/effectiveProcessLease` and at least
    /// every quarter of it, so give the processes of one directory the same value.
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
    /// The event loops of the hub connection, and of the hub when this process serves it; `nil`
    /// (the default) for NIO's shared group (`MultiThreadedEventLoopGroup.singleton`), so that a
    /// process has one set of event-loop threads whatever it runs (sharing, HTTP, metrics). The
    /// connection and the hub each keep to one loop of the group; nothing that blocks runs there
    /// (the ledger is read on a queue of its own). Sharing never shuts the group down.
    public var eventLoopGroup: (any EventLoopGroup)?

    /// Sharing through `directory` with every default.
    public static func sharedDirectory(_ directory: URL) -> SharingConfiguration {
        SharingConfiguration(directory: directory)
    }

    /// Creates a configuration.
    public init(directory: URL, socketPath: String? = nil, pollInterval: TimeInterval = 0.25, mergePositionName: String? = nil) {
        self.directory = directory
        self.socketPath = socketPath
        self.pollInterval = pollInterval
        self.mergePositionName = mergePositionName
    }

    var resolvedSocketPath: String { socketPath ?? Self.defaultSocketPath(in: directory) }

    /// The hub socket when none is configured: `$AMBAR_SOCKET` if set, else
    /// `<directory>/.ambar/sync.sock`.
    public static func defaultSocketPath(in directory: URL, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let fromEnvironment = environment["AMBAR_SOCKET"], !fromEnvironment.isEmpty { return fromEnvironment }
        return directory.appendingPathComponent(".ambar/sync.sock").path
    }

    var resolvedProcessName: String { processName ?? ProcessInfo.processInfo.processName }

    var resolvedMergePositionName: String {
        mergePositionName ?? "\(ProcessInfo.processInfo.processName)-\(getpid())-\(String(ProcessInstance.id, radix: 36))"
    }
}
