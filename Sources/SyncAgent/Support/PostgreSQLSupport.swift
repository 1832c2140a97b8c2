import AmbarCore
import AmbarDataStack
import ArgumentParser
import Foundation

#if PostgreSQL
    import AmbarPostgres
#endif

/// The agent's one seam to its PostgreSQL store, which the package trait `PostgreSQL` builds in
/// (a default trait: `swift build` has it; `scripts/run-demo` builds the SQLite demo without it,
/// which spares a first build postgres-nio and swift-crypto).
///
/// An agent built without it still recognises a `postgres://` store and refuses it at once,
/// saying how to build one that has it: it never falls back to a file.
enum PostgreSQLSupport {
    /// Whether this build of the agent can open a store on a PostgreSQL server.
    static var isBuiltIn: Bool {
        #if PostgreSQL
            true
        #else
            false
        #endif
    }

    /// Whether `text` is a PostgreSQL URL (`postgres://` or `postgresql://`), in either build.
    static func isURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// The usage error of an agent built without PostgreSQL, given a PostgreSQL store in `option`.
    static func notBuiltIn(_ option: String) -> ValidationError {
        ValidationError(
            "\(option): this sync-agent was built without PostgreSQL (its package trait PostgreSQL was off). Build one with it: `swift build -c release --product sync-agent` (the default traits), or run `scripts/run-demo --postgres`."
        )
    }

    /// Checks that `url` can be read as a PostgreSQL URL (the password never appears in the error)
    /// and that this build can open it.
    static func validate(_ url: URL, option: String = "--store") throws {
        #if PostgreSQL
            _ = try PostgresURL(url)
        #else
            throw notBuiltIn(option)
        #endif
    }

    /// The store at `url`, for a coordinator.
    static func storeDescription(_ url: URL) throws -> StoreDescription {
        #if PostgreSQL
            .postgres(url)
        #else
            throw notBuiltIn("--store")
        #endif
    }

    /// The store at `url`, for a `DataStack`.
    static func stackType(_ url: URL) throws -> DataStack.StoreType {
        #if PostgreSQL
            .postgres(url)
        #else
            throw notBuiltIn("--store")
        #endif
    }

    /// Restores the store at `url` from an archive `sync-agent backup` wrote
    /// (`DataStack.restoreStore(on:from:model:allowingAnotherStore:)`): what it did, as
    /// `restore --json` prints it.
    static func restore(_ url: URL, from backup: URL, model: ManagedObjectModel, allowingAnotherStore: Bool) throws -> [String: Any] {
        #if PostgreSQL
            let report = try DataStack.restoreStore(on: try PostgresURL(url), from: backup, model: model, allowingAnotherStore: allowingAnotherStore)
            return [
                "store": report.server, "backup": report.backup.path, "store_uuid": report.storeUUID, "backup_head": report.backupHead,
                "replaced_head": report.replacedHead, "marker_token": report.markerToken,
            ]
        #else
            throw notBuiltIn("--store")
        #endif
    }

    /// The server and database of `url` for people, never its password.
    static func display(_ url: URL) -> String {
        #if PostgreSQL
            // try?: for people only: a URL that does not parse is shown redacted
            (try? PostgresURL(url).description) ?? PostgresURL.redacted(url)
        #else
            "postgres://\(url.host ?? "")\(url.path)"
        #endif
    }
}
