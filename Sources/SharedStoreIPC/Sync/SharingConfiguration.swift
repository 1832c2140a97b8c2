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
    /// The name under which this process's ledger cursor is kept; `<process>-<pid>` by default.
    public var consumerName: String?
    /// The largest frame sent or accepted.
    public var maximumFrameSize = WireFormat.defaultMaximumFrameSize
    /// Whether this process may serve the hub itself when none answers (default `true`). Set it to
    /// `false` for short-lived or low-priority processes, so that the hub stays with long-lived
    /// ones (or a dedicated `sync-agent hub`); such a process polls the ledger until a hub answers.
    public var mayServeHub = true

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
        consumerName ?? "\(ProcessInfo.processInfo.processName)-\(getpid())"
    }
}

/// One transaction of another process, merged into this process's main context.
public struct RemoteMergeEvent: Sendable {
    /// The transaction's ledger token.
    public let token: Int64
    /// Its author and process.
    public let author: String?
    public let processID: Int32
    /// What the transaction inserted, updated and deleted (all of it, registered here or not).
    public let inserted: Set<ManagedObjectID>
    public let updated: Set<ManagedObjectID>
    public let deleted: Set<ManagedObjectID>
    /// What the merge did to this process's main context: the registered objects it re-read, and
    /// those it found gone.
    public let refreshed: Set<ManagedObjectID>
    public let invalidated: Set<ManagedObjectID>
    /// From the commit in the other process to the merge here.
    public let latency: TimeInterval
    /// True when the history this process needed was purged: every object was refreshed instead.
    public let historyExpired: Bool
}

import AmbarStack
