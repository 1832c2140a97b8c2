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

/// A listening connection; reconnects by itself until stopped.
package protocol ServerListening: Sendable {
    /// Whether `LISTEN` is in place right now.
    var isListening: Bool { get }
    /// Stops listening and closes the connection.
    func stop() async
}

/// A connector that can also listen for notifications.
package protocol SQLServerListenConnector: SQLServerConnector {
    /// Listens on `channel` on a connection of its own, reporting to `onEvent` (from any thread),
    /// reconnecting with backoff after a loss, until stopped.
    func listen(channel: String, onEvent: @escaping @Sendable (ServerListenEvent) -> Void) -> any ServerListening
}
