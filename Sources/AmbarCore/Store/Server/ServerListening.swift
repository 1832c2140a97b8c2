import Foundation

/// What a listening connection reports.
package enum ServerListenEvent: Sendable {
    /// `LISTEN` is in place (first time or after a reconnection): notifications from now on
    /// arrive; anything committed before must be read from the ledger.
    case listening
    /// A notification's payload.
    case notification(String)
    /// The listening connection was lost (or could not be made); it reconnects with backoff.
    case lost(reason: String)
}

/// A listening connection, made idle: ``run()`` listens, in the task of its owner.
package protocol ServerListening: Sendable {
    /// Whether `LISTEN` is in place right now.
    var isListening: Bool { get }
    /// Listens, reconnecting with backoff after a loss, until the task running it is cancelled;
    /// the connection is closed before it returns.
    func run() async
}

/// A connector that can also listen for notifications.
package protocol SQLServerListenConnector: SQLServerConnector {
    /// A listener on `channel`, on a connection of its own, that reports to `onEvent` (from any
    /// thread) once its ``ServerListening/run()`` runs.
    func listen(channel: String, onEvent: @escaping @Sendable (ServerListenEvent) -> Void) -> any ServerListening
}
