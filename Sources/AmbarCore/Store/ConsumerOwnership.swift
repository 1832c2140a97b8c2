import Foundation

/// A process that may own a durable consumer: its host, process ID and start time, so that a
/// process that reuses a PID is another owner.
///
/// ```swift
/// let me = ConsumerOwner.thisProcess
/// print(me.id)   // "db-1/4242/1796198400123"
/// ```
public struct ConsumerOwner: Sendable, Hashable, CustomStringConvertible {
    /// The host name (`gethostname`).
    public let host: String
    /// The process ID on that host.
    public let pid: Int32
    /// When the process started (milliseconds are kept).
    public let started: Date

    /// Creates an owner (``thisProcess`` is the usual one; tests and tools name others).
    public init(host: String, pid: Int32, started: Date) {
        self.host = host
        self.pid = pid
        self.started = Date(timeIntervalSince1970: (started.timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    /// The identity recorded in the store: `host/pid/start in ms`.
    public var id: String { "\(host)/\(pid)/\(Int64((started.timeIntervalSince1970 * 1000).rounded()))" }

    /// Reads an identity written by ``id``; nil when it is not one.
    public init?(id: String) {
        let parts = id.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]), let milliseconds = Int64(parts[parts.count - 1]) else { return nil }
        self.init(host: parts.dropLast(2).joined(separator: "/"), pid: pid, started: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// `pid 4242 on db-1`.
    public var description: String { "pid \(pid) on \(host)" }

    /// This process: its host name, PID, and the moment this value was first used.
    public static let thisProcess = ConsumerOwner(host: hostName(), pid: getpid(), started: Date())

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Who owns a durable consumer, as the store records it: the owner, the ownership's epoch (it
/// grows each time the consumer changes hands, never on renewal) and when the lease lapses
/// unless renewed.
public struct ConsumerOwnership: Sendable, Hashable {
    /// The consumer's name.
    public let consumer: String
    /// The process that holds it.
    public let owner: ConsumerOwner
    /// Grows by one at each change of owner: a save fenced by an older epoch is refused.
    public let epoch: Int64
    /// When the lease lapses unless its owner renews it first (the store's clock: the server's
    /// on PostgreSQL).
    public let expires: Date

    /// Creates a record (stores build them; tests may too).
    public init(consumer: String, owner: ConsumerOwner, epoch: Int64, expires: Date) {
        self.consumer = consumer
        self.owner = owner
        self.epoch = epoch
        self.expires = expires
    }
}

/// What claiming a consumer's ownership lease found.
public enum ConsumerClaim: Sendable, Hashable {
    /// The claimant holds the lease (it took it, or renewed its own) until `ownership.expires`.
    case owned(ConsumerOwnership)
    /// Another process holds it until `ownership.expires`: the claimant stands by.
    case heldByAnother(ConsumerOwnership)
}
