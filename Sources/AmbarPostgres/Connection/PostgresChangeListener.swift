import AmbarCore
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// `LISTEN` on a connection of its own (its `application_name` ends in "-listen"), kept up: reconnects with backoff (100 ms doubling to 5 s)
/// after the server restarts or the network drops, and checks the connection every few seconds
/// (a cut link that TCP has not noticed yet counts as lost once a check gets no answer). Nothing
/// runs until its owner runs ``run()``, which ends when that task is cancelled.
final class PostgresChangeListener: ServerListening {
    private let listening = Atomic<Bool>(false)
    private let url: PostgresURL
    private let channel: String
    private let onEvent: @Sendable (ServerListenEvent) -> Void
    /// How often the connection is checked, and how long a check may take.
    static let checkInterval: Duration = .seconds(2)

    init(url: PostgresURL, channel: String, onEvent: @escaping @Sendable (ServerListenEvent) -> Void) {
        self.url = url
        self.channel = channel
        self.onEvent = onEvent
    }

    var isListening: Bool { listening.load(ordering: .acquiring) }

    func run() async {
        var delay: Duration = .milliseconds(100)
        while !Task.isCancelled {
            do {
                // (The wrapper closes the connection when it goes: it lives as long as the listening.)
                // Connected without holding a thread: cancelling the task ends the wait at once.
                let wrapper = try await PostgresServerConnection.connectCancellably(url, listening: true)
                defer { wrapper.close() }
                try await listen(on: wrapper.connection)
            } catch is CancellationError {
                break
            } catch {
                if Task.isCancelled { break }
                listening.store(false, ordering: .releasing)
                let reason = (error as? SQLServerError)?.message ?? PostgresServerConnection.map(error, location: url.description).message
                onEvent(.lost(reason: reason))
                do { try await Task.sleep(for: delay) } catch { break }
                delay = min(delay * 2, .seconds(5))
                continue
            }
            delay = .milliseconds(100)
        }
        listening.store(false, ordering: .releasing)
    }

    /// Listens until the connection fails or the task is cancelled; a watcher checks the
    /// connection meanwhile and closes it when a check goes unanswered.
    private func listen(on connection: PostgresConnection) async throws {
        try await connection.listen(on: channel) { notifications in
            listening.store(true, ordering: .releasing)
            onEvent(.listening)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await notification in notifications { self.onEvent(.notification(notification.payload)) }
                    throw SQLServerError(message: "\(self.url) ended the notifications", connectionLost: true)
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: Self.checkInterval)
                        try await Self.check(connection, within: Self.checkInterval * 2, location: self.url.description)
                    }
                }
                // Whichever ends first (a failure, or cancellation) ends both.
                defer { group.cancelAll() }
                try await group.next()
            }
        }
    }

    /// Runs `SELECT 1`; throws (and closes the connection) when no answer comes within `limit`.
    private static func check(_ connection: PostgresConnection, within limit: Duration, location: String) async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                _ = try await connection.query("SELECT 1", logger: PostgresServerConnection.logger)
                return true
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return false
            }
            defer { group.cancelAll() }
            guard try await group.next() == true else {
                try? await connection.close()  // try?: cleanup; a connection that fails to close is dropped all the same
                throw SQLServerError(message: "\(location) did not answer a check within \(limit)", connectionLost: true)
            }
        }
    }
}

extension PostgresConnector: SQLServerListenConnector {
    func listen(channel: String, onEvent: @escaping @Sendable (ServerListenEvent) -> Void) -> any ServerListening {
        PostgresChangeListener(url: url, channel: channel, onEvent: onEvent)
    }
}
