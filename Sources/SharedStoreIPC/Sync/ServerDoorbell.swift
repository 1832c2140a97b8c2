import AmbarCore
import AmbarDataStack
import Foundation
import Logging

/// The database server's doorbell for a host: one `LISTEN` on the store's channel, held by the
/// process that serves the host's hub, each notification relayed to every process of the host
/// through the hub. So the server sees one listener per host, however many processes run there;
/// when the hub's process dies, the process elected in its place listens instead.
///
/// After each (re)connection it relays the ledger's head as a `tokenOnly`: whatever committed
/// while nobody listened is read from the ledger, never missed. Notifications that are not
/// Ambar's are logged and ignored; a write made outside Ambar (reported by the store's triggers)
/// is relayed as a `foreignWrite` frame, and every process of the host re-reads its objects.
public final class ServerDoorbell: Sendable {
    private let listener: any ServerListening
    static let logger = Logger(label: "ambar.sync.server-doorbell")

    /// The state of the listening connection, for `status`.
    public enum ListenState: Sendable, Equatable, CustomStringConvertible {
        /// Connecting for the first time.
        case connecting
        /// `LISTEN` is in place.
        case listening
        /// The connection was lost, for the reason given; reconnecting with backoff.
        case lost(String)

        public var description: String {
            switch self {
            case .connecting: return "connecting"
            case .listening: return "listening"
            case .lost(let reason): return "lost (\(reason))"
            }
        }
    }

    /// The server's doorbell for the store of `coordinator`, relayed by `hub` (the `sync-agent
    /// hub` daemon of a host), idle until its owner runs ``run()``; `nil` when the store is not on
    /// a server.
    ///
    /// ```swift
    /// if let doorbell = ServerDoorbell(coordinator: coordinator, hub: hub) {
    ///     group.addTask { await doorbell.run() }  // listens until the group is cancelled
    /// }
    /// ```
    public convenience init?(coordinator: PersistentStoreCoordinator, hub: SyncHub) {
        guard let uuid = UUID(uuidString: coordinator.storeIdentifier) else { return nil }
        self.init(
            store: coordinator.storeDescription, storeUUID: uuid, storeIdentifier: coordinator.storeIdentifier, hub: hub,
            head: { try coordinator.currentHistoryToken() })
    }

    /// Starts the server's doorbell for the store of `coordinator` in a task of its own, until
    /// ``stop()``; `nil` when the store is not on a server. A thin wrapper: code with a task of
    /// its own to give runs ``run()`` there instead (a doorbell made with
    /// ``init(coordinator:hub:)``).
    public static func start(coordinator: PersistentStoreCoordinator, hub: SyncHub) -> ServerDoorbell? {
        guard let doorbell = ServerDoorbell(coordinator: coordinator, hub: hub) else { return nil }
        doorbell.started.withLock { $0 = Task { await doorbell.run() } }
        return doorbell
    }

    /// The task ``start(coordinator:hub:)`` runs ``run()`` in.
    private let started = Locked<Task<Void, Never>?>(nil)
    private let listenState = Locked<ListenState>(.connecting)

    /// A doorbell that, once ``run()`` runs, listens on the channel of the store `storeUUID`
    /// (spelled `storeIdentifier` in the store) and relays to `hub`; `head` reads the ledger's
    /// head token.
    init?(
        store: StoreDescription, storeUUID: UUID, storeIdentifier: String, hub: SyncHub,
        head: @escaping @Sendable () throws -> Int64
    ) {
        guard case .server(let server) = store, let connector = server.connector as? any SQLServerListenConnector else { return nil }
        let state = listenState
        let channel = StoreChangeNotice.channel(storeIdentifier: storeIdentifier)
        listener = connector.listen(channel: channel) { event in
            switch event {
            case .listening:
                state.withLock { $0 = .listening }
                SharingMetrics.serverListening.record(1)
                do {
                    // (An empty ledger has nothing to catch up on; tokens start at 1.)
                    let token = try head()
                    if token > 0 { hub.relayFromServer(.tokenOnly(storeUUID: storeUUID, token: token, processID: 0, instanceID: 0)) }
                } catch {
                    Self.logger.warning("listening again, but the ledger head could not be read (\(error)); processes catch up at their next ledger check")
                }
            case .notification(let payload):
                if payload == StoreChangeNotice.foreignWritePayload {
                    hub.relayFromServer(.foreignWrite(storeUUID: storeUUID))
                } else if let notice = StoreChangeNotice(payload: payload) {
                    hub.relayFromServer(Self.frame(notice, storeUUID: storeUUID))
                } else {
                    Self.logger.notice("ignoring a notification on \(channel) that is not Ambar's", metadata: ["payload": "\(payload.prefix(80))"])
                }
            case .lost(let reason):
                SharingMetrics.serverListening.record(0)
                let changed = state.withLock { s -> Bool in
                    defer { s = .lost(reason) }
                    return s != .lost(reason)
                }
                if changed {
                    Self.logger.warning("the database server's doorbell is down (\(reason)); reconnecting with backoff, processes follow the ledger meanwhile")
                }
            }
        }
    }

    /// The state of the listening connection.
    public var state: ListenState { listenState.withLock { $0 } }

    /// Listens and relays, reconnecting with backoff after a loss, until the task running it is
    /// cancelled; the listening connection is closed before it returns.
    public func run() async {
        await listener.run()
    }

    /// Stops the listening that ``start(coordinator:hub:)`` started, and waits for its connection
    /// to close; does nothing for a doorbell run by its owner (cancel that task instead).
    public func stop() async {
        let task = started.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    /// The hub frame for a notice: the keys when it carries them, else the token alone.
    static func frame(_ notice: StoreChangeNotice, storeUUID: UUID) -> Frame {
        guard let changes = notice.changes else {
            return .tokenOnly(storeUUID: storeUUID, token: notice.token, processID: notice.processID, instanceID: notice.instanceID)
        }
        var entities: [String: Frame.EntityChanges] = [:]
        for (entity, keys) in changes {
            entities[entity] = Frame.EntityChanges(inserted: keys.inserted, updated: keys.updated, deleted: keys.deleted)
        }
        return .didSave(
            Frame.DidSave(storeUUID: storeUUID, token: notice.token, processID: notice.processID, instanceID: notice.instanceID, author: nil, changes: entities)
        )
    }
}
