import AmbarCore
import AmbarDataStack
import AmbarSystemd
import ArgumentParser
import Foundation
import Logging
import SharedStoreIPC

/// Options every command shares: where the shared directory and the store are.
struct DirectoryOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The shared directory: the hub's socket, and the store unless --store names one (default: $AMBAR_DIRECTORY, else $STATE_DIRECTORY, else ~/.local/share/ambar)."
    )
    var directory: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: a postgres:// or postgresql:// URL for a database on a PostgreSQL server that several hosts share (sslmode=, sslrootcert=, password_file=; the password may also come from $PGPASSWORD), or an SQLite file (default: $AMBAR_STORE, else <directory>/ambar.sqlite).",
            valueName: "url-or-file"))
    var store: String?

    /// The store as given (`--store`, else `$AMBAR_STORE`), if it was.
    private var storeArgument: String? {
        if let store, !store.isEmpty { return store }
        if let store = ProcessInfo.processInfo.environment["AMBAR_STORE"], !store.isEmpty { return store }
        return nil
    }

    /// The PostgreSQL URL of the store, when it is on a server.
    var serverURL: URL? {
        guard let argument = storeArgument, PostgreSQLSupport.isURL(argument) else { return nil }
        return URL(string: argument)
    }

    /// Where the store is, for the coordinators.
    func storeDescription() throws -> StoreDescription {
        if let serverURL { return try PostgreSQLSupport.storeDescription(serverURL) }
        return .sqlite(storeFile)
    }

    /// The store for people: its file, or its server and database (never the password).
    var storeDisplay: String {
        if let serverURL { return PostgreSQLSupport.display(serverURL) }
        return storeFile.path
    }

    func validate() throws {
        if let argument = storeArgument, argument.contains("://"), !PostgreSQLSupport.isURL(argument) {
            throw ValidationError("--store takes a postgres:// or postgresql:// URL, or a file path (got \(argument.prefix(while: { $0 != ":" }))://…).")
        }
        if let argument = storeArgument, PostgreSQLSupport.isURL(argument) {
            // Never fall back to the default file for a server URL that cannot be read.
            guard let serverURL else {
                throw ValidationError("--store: the PostgreSQL URL cannot be read (percent-encode reserved characters in the user and password).")
            }
            try PostgreSQLSupport.validate(serverURL)
        }
    }

    /// The shared directory, resolved.
    var url: URL {
        let environment = ProcessInfo.processInfo.environment
        if let directory { return URL(fileURLWithPath: directory, isDirectory: true) }
        if let dir = environment["AMBAR_DIRECTORY"], !dir.isEmpty { return URL(fileURLWithPath: dir, isDirectory: true) }
        return StoreLocation.defaultDirectory(name: "ambar", environment: environment)
    }

    /// The SQLite store file: `--store`'s path, else `ambar.sqlite` in the shared directory.
    var storeFile: URL {
        if let argument = storeArgument, !PostgreSQLSupport.isURL(argument) { return URL(fileURLWithPath: argument) }
        return url.appendingPathComponent("ambar.sqlite")
    }
}

/// Options of commands that talk to the hub.
struct SocketOptions: ParsableArguments {
    @Option(name: .long, help: "The hub socket (default: $AMBAR_SOCKET, else <directory>/.ambar/sync.sock).")
    var socket: String?

    @Option(
        name: .long,
        help:
            "Seconds to wait for the hub's welcome after connecting; a hub that does not answer in time is treated as absent (the ledger is followed meanwhile)."
    )
    var welcomeTimeout: Double = 2

    @Flag(
        name: .long, help: "Never serve the hub in this process when none answers: follow the ledger until one does (for processes the hub should not live in)."
    )
    var noHub = false

    func validate() throws {
        guard welcomeTimeout > 0, welcomeTimeout.isFinite else { throw ValidationError("--welcome-timeout must be a positive number of seconds.") }
    }

    func path(in directory: URL) -> String {
        socket ?? SharingConfiguration.defaultSocketPath(in: directory)
    }

    /// The sharing configuration for `directory` with these options, on the agent's event loop;
    /// the process names itself `processName` to the hub (its peers list shows it).
    ///
    /// - Throws: `AmbarError.tooManyOpenFiles` when the agent's event loop cannot start.
    func sharing(in directory: URL, as processName: String) throws(AmbarError) -> SharingConfiguration {
        var configuration = SharingConfiguration.sharedDirectory(directory)
        configuration.eventLoopGroup = try AgentEventLoops.group(for: "starting the hub connection")
        configuration.processName = processName
        configuration.socketPath = socket
        configuration.welcomeTimeout = .milliseconds(Int64(welcomeTimeout * 1000))
        configuration.mayServeHub = !noHub
        return configuration
    }
}

/// How a process instance ID is shown: 16 hex digits (JSON numbers cannot hold 64 bits exactly).
enum InstanceID {
    static func text(_ id: UInt64) -> String {
        let digits = String(id, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }
}

/// Writes one JSON object per line.
enum JSONLine {
    /// Writes `object` as one line, keys sorted.
    ///
    /// - Throws: why `object` has no JSON form (a value JSON cannot hold); nothing is written.
    static func print(_ object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}

/// Opens the stack of an existing store (whose model the store keeps).
func openExistingStack(_ options: DirectoryOptions) throws -> DataStack {
    let model = try existingModel(options)
    if let serverURL = options.serverURL {
        return try DataStack.open(storeType: try PostgreSQLSupport.stackType(serverURL), model: .model(model), name: "ambar")
    }
    return try DataStack.open(model: .model(model), storeURL: options.storeFile, name: "ambar")
}

/// The model an existing store keeps; a missing store is a usage error that says how to make it.
func existingModel(_ options: DirectoryOptions) throws -> ManagedObjectModel {
    if options.serverURL == nil, !FileManager.default.fileExists(atPath: options.storeFile.path) {
        throw ValidationError("No store at \(options.storeFile.path). Create it with `sync-agent init --model FILE --directory \(options.url.path)`.")
    }
    let store = try options.storeDescription()
    let result = Result { () throws(AmbarError) in try PersistentStoreCoordinator.storedModel(in: store) }
    if case .failure(let error) = result, case .storeCannotOpen(_, let reason, _) = error, options.serverURL != nil {
        throw ValidationError("No store at \(options.storeDisplay): \(reason)")
    }
    return try result.get()
}

/// Options of the long-running commands: logging and the configuration file.
struct ServiceOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "A configuration file, read at start and on SIGHUP (log-level, history-retention, consumer-lease, receipt-retention; max-peers for the hub; max-line-bytes, max-file-bytes for run). A missing file means defaults."
    )
    var config: String?

    @Option(name: .long, help: "The log level (trace, debug, info, notice, warning, error, critical); the configuration file's log-level wins.")
    var logLevel: String = "info"

    @Option(
        name: .long,
        help:
            "Seconds a ledger transaction is kept; the process serving the hub purges older ones, never past a live consumer (default 86400; the configuration file's history-retention wins)."
    )
    var historyRetention: Double?

    @Option(
        name: .long, help: "Seconds a consumer that stopped recording its position still holds history back; its cursor is removed after that (default 86400).")
    var consumerLease: Double?

    @Option(name: .long, help: "Seconds an idempotency receipt is kept (default 2592000, 30 days).")
    var receiptRetention: Double?

    /// The settings: defaults, then the command line, then the configuration file (read again on
    /// each reload).
    func settings() throws -> LiveSettings {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        var base = AgentSettings()
        base.logLevel = level
        for (name, value) in [("--history-retention", historyRetention), ("--consumer-lease", consumerLease), ("--receipt-retention", receiptRetention)] {
            if let value, !(value > 0 && value.isFinite) { throw ValidationError("\(name) must be a positive number of seconds.") }
        }
        base.retention.history = historyRetention ?? base.retention.history
        base.retention.consumerLease = consumerLease ?? base.retention.consumerLease
        base.retention.receipts = receiptRetention ?? base.retention.receipts
        return try LiveSettings(base: base, file: config)
    }
}

/// Bootstraps logging once per process: journald fields under systemd (filed under
/// `$AMBAR_LOG_IDENTIFIER`, else `identifier`), plain lines on a terminal.
func bootstrapLogging(identifier: String = "sync-agent", level: Logger.Level = .info) {
    AgentLogging.bootstrap(identifier: ProcessInfo.processInfo.environment["AMBAR_LOG_IDENTIFIER"] ?? identifier, level: level)
}
