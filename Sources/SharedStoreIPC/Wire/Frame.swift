import Foundation

/// One message between a process and the hub. See `Sources/SharedStoreIPC/Documentation.docc/WireFormatSpecification.md`.
public enum Frame: Sendable, Equatable {
    /// The first frame a client sends: who it is and where it is in the ledger.
    case hello(Hello)
    /// The hub's answer to a valid hello.
    case welcome(Welcome)
    /// A refusal with a reason; the sender closes the connection after it.
    case error(code: ErrorCode, message: String)
    /// A committed save: its token and the object IDs it changed.
    case didSave(DidSave)
    /// A committed save too large for one frame: its token only (read the ledger).
    case tokenOnly(storeUUID: UUID, token: Int64, processID: Int32, instanceID: UInt64)
    /// The store changed outside Ambar (a database trigger saw a write that no Ambar save made):
    /// every process re-reads the objects it holds.
    case foreignWrite(storeUUID: UUID)
    /// Keep-alive request and answer.
    case ping(UInt64)
    case pong(UInt64)
    /// Client → hub: list the connected processes (answered with ``peers(_:)``).
    case peersRequest
    /// Hub → client: the connected processes, as the hub sees them.
    case peers([PeerEntry])

    /// A connected process in a ``peers(_:)`` answer.
    public struct PeerEntry: Sendable, Equatable {
        /// Its process ID and name, from its hello.
        public var processID: Int32
        public var processName: String
        /// Its process instance (`ProcessInstance.id` in that process), from its hello.
        public var instanceID: UInt64
        /// The ledger position it announced when it connected.
        public var connectCursor: Int64
        /// The highest token the hub relayed from or to it since.
        public var lastToken: Int64

        /// Creates an entry.
        public init(processID: Int32, instanceID: UInt64 = 0, processName: String, connectCursor: Int64, lastToken: Int64) {
            self.processID = processID
            self.instanceID = instanceID
            self.processName = processName
            self.connectCursor = connectCursor
            self.lastToken = lastToken
        }
    }

    /// A client's introduction.
    public struct Hello: Sendable, Equatable {
        public var protocolVersion: UInt8
        public var storeUUID: UUID
        /// The process ID, for people (PIDs repeat across PID namespaces).
        public var processID: Int32
        /// The process instance (`ProcessInstance.id`), which tells processes apart.
        public var instanceID: UInt64
        public var processName: String
        /// The last ledger token the client has merged.
        public var cursor: Int64
        /// The shared-memory bell the client rings or hears, if any (see ``BellUse``).
        public var bell: BellUse?

        /// A hello of this build's protocol version, unless `protocolVersion` says otherwise.
        public init(
            protocolVersion: UInt8 = WireFormat.protocolVersion, storeUUID: UUID, processID: Int32,
            instanceID: UInt64, processName: String, cursor: Int64, bell: BellUse? = nil
        ) {
            self.protocolVersion = protocolVersion
            self.storeUUID = storeUUID
            self.processID = processID
            self.instanceID = instanceID
            self.processName = processName
            self.cursor = cursor
            self.bell = bell
        }
    }

    /// The hub's acceptance.
    public struct Welcome: Sendable, Equatable {
        public var hubProcessID: Int32
        /// Other processes connected for the same store.
        public var peers: UInt32

        public init(hubProcessID: Int32, peers: UInt32) {
            self.hubProcessID = hubProcessID
            self.peers = peers
        }
    }

    /// Why the hub refuses a peer.
    public enum ErrorCode: UInt16, Sendable, Equatable {
        case unsupportedVersion = 1
        case wrongStore = 2
        case notPermitted = 3
        case malformed = 4
        case tooManyPeers = 5
        case unknown = 0xFFFF
    }

    /// A save's object IDs, grouped per entity as primary keys.
    public struct DidSave: Sendable, Equatable {
        public var storeUUID: UUID
        public var token: Int64
        /// The saving process's ID, for people.
        public var processID: Int32
        /// The saving process's instance (`ProcessInstance.id`).
        public var instanceID: UInt64
        public var author: String?
        /// Per entity name: inserted, updated and deleted primary keys.
        public var changes: [String: EntityChanges]

        public init(storeUUID: UUID, token: Int64, processID: Int32, instanceID: UInt64, author: String?, changes: [String: EntityChanges]) {
            self.storeUUID = storeUUID
            self.token = token
            self.processID = processID
            self.instanceID = instanceID
            self.author = author
            self.changes = changes
        }

        /// The number of object IDs carried.
        public var objectCount: Int { changes.values.reduce(0) { $0 + $1.inserted.count + $1.updated.count + $1.deleted.count } }
    }

    /// One entity's changed primary keys.
    public struct EntityChanges: Sendable, Equatable {
        public var inserted: [Int64] = []
        public var updated: [Int64] = []
        public var deleted: [Int64] = []

        public init(inserted: [Int64] = [], updated: [Int64] = [], deleted: [Int64] = []) {
            self.inserted = inserted
            self.updated = updated
            self.deleted = deleted
        }

        mutating func sort() {
            inserted.sort()
            updated.sort()
            deleted.sort()
        }
    }
}
