import Foundation

/// One committed transaction in the store's change ledger: who saved what, in commit order.
///
/// Every save — from any context, in any process, batch operations included — writes its
/// transaction in the same SQLite transaction as its data, so the ledger is exactly as durable as
/// the data. Tokens increase monotonically and are never reused.
public struct HistoryTransaction: Sendable, Hashable {
    /// The transaction's token: its position in commit order.
    public let token: Int64
    /// When it committed.
    public let timestamp: Date
    /// The saving context's transaction author, if any.
    public let author: String?
    /// The saving process's ID, for people: PIDs repeat across PID namespaces and restarts.
    public let processID: Int32
    /// The saving process's instance (``ProcessInstance/id``): tells processes apart where PIDs do
    /// not. `nil` for transactions written before the ledger recorded it.
    public let instanceID: UInt64?
    /// The saving context's name, if any.
    public let contextName: String?
    /// Objects inserted.
    public let inserted: Set<ManagedObjectID>
    /// Objects updated.
    public let updated: Set<ManagedObjectID>
    /// Objects deleted.
    public let deleted: Set<ManagedObjectID>
    /// For updated objects, the names of the properties that changed.
    public let updatedProperties: [ManagedObjectID: [String]]
    /// The values a deleted object's attributes held, for the attributes that keep them
    /// (``AttributeDescription/preservesValueOnDeletion``), by attribute name: Core Data's
    /// tombstones. Objects whose entity preserves nothing, and objects deleted by a batch delete,
    /// have none.
    public let tombstones: [ManagedObjectID: [String: AttributeValue]]

    /// Whether this process saved it (its instance is ``ProcessInstance/id``).
    public var isFromThisProcess: Bool { instanceID == ProcessInstance.id }

    /// Creates a transaction (the ledger's readers build them; tests may too).
    public init(
        token: Int64, timestamp: Date, author: String?, processID: Int32, instanceID: UInt64?, contextName: String?,
        inserted: Set<ManagedObjectID>, updated: Set<ManagedObjectID>, deleted: Set<ManagedObjectID>,
        updatedProperties: [ManagedObjectID: [String]] = [:], tombstones: [ManagedObjectID: [String: AttributeValue]] = [:]
    ) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.processID = processID
        self.instanceID = instanceID
        self.contextName = contextName
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.updatedProperties = updatedProperties
        self.tombstones = tombstones
    }

    /// Whether it changed no object (a marker, such as the one a truncating checkpoint writes).
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// The transaction as a did-save notification, to pass to
    /// ``ManagedObjectContext/mergeChanges(fromContextDidSave:)``.
    public var notification: DidSaveNotification {
        DidSaveNotification(inserted: inserted, updated: updated, deleted: deleted, author: author, contextName: contextName, token: token)
    }
}

/// A position in the ledger, kept in the store: a durable consumer's, or a sharing process's.
///
/// There are two kinds, told apart by ``lease``:
///
/// - **A durable consumer's** (``isDurable``, `lease == nil`): the position of a named consumer
///   (`ChangeConsumer` in SharedStoreIPC, or your own code through
///   ``ManagedObjectContext/save(movingConsumer:from:to:)``). It resumes there after a restart,
///   and it holds the ledger's history back while it was seen within
///   ``HistoryRetention/consumerLease``. It stays in the store until removed
///   (``PersistentStoreCoordinator/removeHistoryCursor(consumer:)``): a consumer that comes back
///   after its lease finds out whether history it had not processed was purged.
/// - **A sharing process's merge position** (`lease != nil`): where the process's main context
///   has merged to. It never resumes (a new process starts at the ledger's head) and holds
///   history back for at most its lease after it was last recorded
///   (``HistoryRetention/processLease``), so a process that died leaves nothing that delays
///   purging for longer; purging removes it then.
public struct HistoryCursor: Sendable, Hashable {
    /// The consumer's name.
    public let consumer: String
    /// The last token it has processed.
    public let token: Int64
    /// When it last reported its position.
    public let lastSeen: Date
    /// How long after ``lastSeen`` a sharing process's merge position holds history back (and is
    /// then removed), in seconds; `nil` for a durable consumer.
    public let lease: TimeInterval?

    /// Whether this is a durable consumer's position (it resumes after a restart), not a
    /// sharing process's merge position.
    public var isDurable: Bool { lease == nil }

    /// Creates a position (the ledger's readers build them; tests may too).
    public init(consumer: String, token: Int64, lastSeen: Date, lease: TimeInterval? = nil) {
        self.consumer = consumer
        self.token = token
        self.lastSeen = lastSeen
        self.lease = lease
    }
}

/// A move of a durable consumer's position, written in the same transaction as a save.
package struct ConsumerMove: Sendable, Hashable {
    /// The consumer.
    package let consumer: String
    /// Where the position must be for the move to happen (`nil`: not recorded yet).
    package let expected: Int64?
    /// Where it moves to.
    package let token: Int64
    /// The ownership the consumer runs under: the move happens only while the store still
    /// records its owner and epoch; nil for a consumer that holds no lease.
    package let fence: ConsumerOwnership?
    /// The outbox messages written with the move, in the same transaction.
    package var outbox: [OutboxDraft] = []

    package init(consumer: String, expected: Int64?, token: Int64) {
        self.consumer = consumer
        self.expected = expected
        self.token = token
        self.fence = nil
    }

    /// A move fenced by `ownership`, which must be `consumer`'s.
    package init(consumer: String, expected: Int64?, token: Int64, fencedBy ownership: ConsumerOwnership) throws(AmbarError) {
        guard ownership.consumer == consumer else {
            throw .invalidArgument("the ownership of '\(ownership.consumer)' cannot fence a move of consumer '\(consumer)'")
        }
        self.consumer = consumer
        self.expected = expected
        self.token = token
        self.fence = ownership
    }
}

/// What one save or batch wrote, for the ledger.
package struct LedgerEntry: Sendable {
    package enum Kind: Int, Sendable {
        case insert = 0
        case update = 1
        case delete = 2
    }
    package var author: String?
    package var contextName: String?
    /// (entity, kind, changed property names for updates) → primary keys.
    package var groups: [LedgerGroup: [Int64]] = [:]
    /// The preserved values of deleted objects.
    package var tombstones: [LedgerTombstone] = []

    /// An entry with nothing recorded yet.
    package init(author: String? = nil, contextName: String? = nil) {
        self.author = author
        self.contextName = contextName
    }

    package mutating func record(_ id: ManagedObjectID, _ kind: Kind, properties: [String]? = nil) {
        record(id, kind, ledgerProperties: properties.map(Self.ledgerProperties))
    }

    /// How the ledger records the changed properties of an update: their names, sorted and
    /// joined by commas. Work it out once for many objects that changed the same properties.
    package static func ledgerProperties(_ names: some Sequence<String>) -> String {
        names.sorted().joined(separator: ",")
    }

    /// Records one object, with the changed properties of an update already sorted and joined
    /// by commas (``UpdateChange/ledgerProperties``).
    package mutating func record(_ id: ManagedObjectID, _ kind: Kind, ledgerProperties: String?) {
        guard let pk = id.primaryKey else { return }
        groups[LedgerGroup(entity: id.entityName, kind: kind, properties: kind == .update ? ledgerProperties : nil), default: []].append(pk)
    }

    /// Records many objects of one entity at once (inserts and deletes).
    package mutating func record(entity: String, _ kind: Kind, primaryKeys: [Int64]) {
        guard !primaryKeys.isEmpty else { return }
        groups[LedgerGroup(entity: entity, kind: kind, properties: nil), default: []].append(contentsOf: primaryKeys)
    }

    /// Records the preserved values of a deleted object (nothing when there are none).
    package mutating func recordTombstone(_ id: ManagedObjectID, values: [String: AttributeValue]) {
        guard let pk = id.primaryKey, !values.isEmpty else { return }
        tombstones.append(LedgerTombstone(entity: id.entityName, primaryKey: pk, values: values))
    }

    package var isEmpty: Bool { groups.isEmpty }
}

/// The preserved attribute values of one deleted object, as the ledger keeps them.
package struct LedgerTombstone: Hashable, Sendable {
    package let entity: String
    package let primaryKey: Int64
    package let values: [String: AttributeValue]

    /// Made from its parts.
    package init(entity: String, primaryKey: Int64, values: [String: AttributeValue]) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.values = values
    }
}

package struct LedgerGroup: Hashable, Sendable {
    package let entity: String
    package let kind: LedgerEntry.Kind
    package let properties: String?

    /// Made from its parts, by the modules that read and write stores.
    package init(entity: String, kind: LedgerEntry.Kind, properties: String?) {
        self.entity = entity
        self.kind = kind
        self.properties = properties
    }
}
