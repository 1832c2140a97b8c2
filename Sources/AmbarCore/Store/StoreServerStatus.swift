import Foundation

/// A database server holding a store, as `sync-agent status` shows it.
public struct StoreServerStatus: Sendable, Equatable {
    /// The backend: "postgresql".
    public var backend: String
    /// The server and database, without credentials.
    public var location: String
    /// The server's version (`server_version`).
    public var version: String
    /// The connections listening for the store's doorbell: one per host whose processes share
    /// the store (each host's hub holds one).
    public var listeners: Int
    /// How full the server's notification queue is, 0–1 (`pg_notification_queue_usage()`): at 1,
    /// every commit that notifies fails. A listener stuck in a long transaction holds it back.
    public var notificationQueueUsage: Double

    public init(backend: String, location: String, version: String, listeners: Int, notificationQueueUsage: Double) {
        self.backend = backend
        self.location = location
        self.version = version
        self.listeners = listeners
        self.notificationQueueUsage = notificationQueueUsage
    }
}
