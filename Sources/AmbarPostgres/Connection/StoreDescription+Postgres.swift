import AmbarCore
import AmbarDataStack
import Foundation

extension StoreDescription {
    /// A store in a PostgreSQL database, shared by processes on several hosts.
    ///
    /// ```swift
    /// import AmbarPostgres
    ///
    /// let url = URL(string: "postgres://ambar@db.internal:5432/inventory?sslmode=verify-full")!
    /// let coordinator = try PersistentStoreCoordinator(model: model, store: .postgres(url))
    /// ```
    ///
    /// The tables are created from the model on first open (several hosts opening at once
    /// serialise on an advisory lock). A URL that cannot be read is reported when the store
    /// opens, as ``AmbarError/serverUnavailable(server:operation:reason:cause:)``. See ``PostgresURL``
    /// for the parameters.
    public static func postgres(_ url: URL) -> StoreDescription {
        .server(ServerStoreDescription(postgres: url))
    }

    /// A store in the PostgreSQL database `url` names.
    public static func postgres(_ url: PostgresURL) -> StoreDescription {
        .server(ServerStoreDescription(connector: PostgresConnector(url: url)))
    }
}

extension DataStack.StoreType {
    /// A stack on the PostgreSQL database `url` names: its processes, on any host, share it.
    ///
    /// ```swift
    /// let stack = try DataStack.open(storeType: .postgres(url), model: .model(model))
    /// ```
    public static func postgres(_ url: URL) -> DataStack.StoreType {
        .server(ServerStoreDescription(postgres: url))
    }
}

extension ServerStoreDescription {
    /// The database `url` names; a URL that cannot be read fails when the store opens, saying why.
    init(postgres url: URL) {
        do {
            self.init(connector: PostgresConnector(url: try PostgresURL(url)))
        } catch {
            var problem = error.description
            if case .invalidArgument(let reason) = error { problem = reason }
            self.init(connector: UnreadableURLConnector(displayLocation: PostgresURL.redacted(url), problem: problem))
        }
    }
}
