import AmbarStack
import Foundation
import SharedStoreIPC

/// Where and how a container keeps its store: SwiftData's `ModelConfiguration`.
///
/// ```swift
/// ModelConfiguration(isStoredInMemoryOnly: true)                       // in memory
/// ModelConfiguration(url: URL(fileURLWithPath: "/var/lib/trips/trips.store"))
/// ModelConfiguration("Trips", schema: schema, allowsSave: false)      // read-only, default place
/// ```
///
/// Without a URL the store is `default.store` (or `<name>.store`) in the process's data
/// directory: `$STATE_DIRECTORY` under systemd, else `$XDG_DATA_HOME/<process>` or
/// `~/.local/share/<process>`.
///
/// ## Several processes
///
/// SwiftData shares a store between an app and its extensions through an app group; here the
/// processes of one directory share it (Ambar's sharing, see SharedStoreIPC). A container whose
/// configuration names a shared directory joins it: every other process's saves are merged into
/// its ``ModelContainer/mainContext`` (Observation sees its models change), and
/// ``ModelContext/fetchHistory(_:)`` lists every process's transactions.
///
/// ```swift
/// let shared = URL(fileURLWithPath: "/var/lib/trips")
/// let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(sharedDirectory: shared))
/// // or a store on PostgreSQL, for processes on several hosts (import AmbarPostgres):
/// ModelConfiguration(store: .postgres(URL(string: "postgres://trips@db.example/trips")!), sharing: .sharedDirectory(shared))
/// ```
public struct ModelConfiguration: Hashable, Sendable, Identifiable {
    /// Where an app group's shared container is: accepted, and ignored (there are no app
    /// groups here; name a directory with `url:` instead).
    public struct GroupContainer: Hashable, Sendable {
        let identifier: String?
        /// The default.
        public static let automatic = GroupContainer(identifier: nil)
        /// No group container.
        public static let none = GroupContainer(identifier: nil)
        /// The container of group `identifier`.
        public static func identifier(_ identifier: String) -> GroupContainer { GroupContainer(identifier: identifier) }
    }

    /// Which CloudKit database mirrors the store: accepted, and ignored (there is no CloudKit
    /// here; several processes and hosts share a store through Ambar instead).
    public struct CloudKitDatabase: Hashable, Sendable {
        let identifier: String?
        /// The default.
        public static let automatic = CloudKitDatabase(identifier: nil)
        /// No CloudKit database.
        public static let none = CloudKitDatabase(identifier: nil)
        /// The private database of `container`.
        public static func `private`(_ container: String) -> CloudKitDatabase { CloudKitDatabase(identifier: container) }
    }

    /// The configuration's name (`"default"` unless given).
    public let name: String
    /// The models this configuration stores, when it names them.
    public let schema: Schema?
    /// The store's file (unused when the store is in memory).
    public let url: URL
    /// Whether the store lives in memory only, gone when the container is.
    public let isStoredInMemoryOnly: Bool
    /// Whether contexts may save (a read-only configuration refuses).
    public let allowsSave: Bool
    /// How the container shares its store with other processes; `nil` (the default): it does not.
    public let sharing: SharingConfiguration?
    /// The store when it is not a file named by ``url`` (a database server).
    private let server: StoreDescription?

    /// The name.
    public var id: String { name }

    /// A store at the default place, or in memory.
    public init(
        _ name: String? = nil, schema: Schema? = nil, isStoredInMemoryOnly: Bool = false, allowsSave: Bool = true,
        groupContainer: GroupContainer = .automatic, cloudKitDatabase: CloudKitDatabase = .automatic
    ) {
        let name = name ?? "default"
        self.init(name: name, schema: schema, url: Self.defaultURL(name: name), isStoredInMemoryOnly: isStoredInMemoryOnly, allowsSave: allowsSave)
    }

    /// A store in the file at `url`.
    public init(_ name: String? = nil, schema: Schema? = nil, url: URL, allowsSave: Bool = true, cloudKitDatabase: CloudKitDatabase = .automatic) {
        self.init(name: name ?? "default", schema: schema, url: url, isStoredInMemoryOnly: false, allowsSave: allowsSave)
    }

    /// A store for `types`, at the default place or in memory.
    @_disfavoredOverload  // `ModelConfiguration()` and `(isStoredInMemoryOnly:)` are the first initializer's
    public init(for types: any PersistentModel.Type..., isStoredInMemoryOnly: Bool = false) {
        self.init(schema: Schema(types), isStoredInMemoryOnly: isStoredInMemoryOnly)
    }

    /// A store the processes of `sharedDirectory` share: the file `<name>.store` in it
    /// (`default.store` without a name), and sharing with every default of
    /// `SharingConfiguration.sharedDirectory(_:)`.
    public init(_ name: String? = nil, schema: Schema? = nil, sharedDirectory: URL, allowsSave: Bool = true) {
        let name = name ?? "default"
        self.init(
            name: name, schema: schema, url: sharedDirectory.appendingPathComponent("\(name).store"), isStoredInMemoryOnly: false,
            allowsSave: allowsSave, sharing: .sharedDirectory(sharedDirectory))
    }

    /// A store the description names — a file (`.sqlite(url)`) or a database server
    /// (`.postgres(url)` from AmbarPostgres) — shared with other processes as `sharing` says
    /// (not shared when `nil`).
    ///
    /// A store on a server needs no shared directory to be read and written; with `sharing`, this
    /// process also merges every other process's saves into the main context, on any host.
    public init(_ name: String? = nil, schema: Schema? = nil, store: StoreDescription, sharing: SharingConfiguration? = nil, allowsSave: Bool = true) {
        let name = name ?? "default"
        switch store {
        case .sqlite(let url):
            self.init(name: name, schema: schema, url: url, isStoredInMemoryOnly: false, allowsSave: allowsSave, sharing: sharing)
        case .inMemory:
            self.init(name: name, schema: schema, url: URL(fileURLWithPath: "/dev/null"), isStoredInMemoryOnly: true, allowsSave: allowsSave, sharing: sharing)
        case .server(let server):
            self.init(
                name: name, schema: schema, url: URL(string: server.location) ?? URL(fileURLWithPath: "/dev/null"), isStoredInMemoryOnly: false,
                allowsSave: allowsSave, sharing: sharing, server: store)
        }
    }

    private init(
        name: String, schema: Schema?, url: URL, isStoredInMemoryOnly: Bool, allowsSave: Bool, sharing: SharingConfiguration? = nil,
        server: StoreDescription? = nil
    ) {
        self.name = name
        self.schema = schema
        self.url = url
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.allowsSave = allowsSave
        self.sharing = sharing
        self.server = server
    }

    /// Configurations are equal when they name the same store the same way (and share it
    /// through the same directory).
    public static func == (lhs: ModelConfiguration, rhs: ModelConfiguration) -> Bool {
        lhs.name == rhs.name && lhs.schema == rhs.schema && lhs.url == rhs.url && lhs.isStoredInMemoryOnly == rhs.isStoredInMemoryOnly
            && lhs.allowsSave == rhs.allowsSave && lhs.sharing?.directory == rhs.sharing?.directory && lhs.server == rhs.server
    }

    /// Hashes the name and the store's place.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(url)
        hasher.combine(isStoredInMemoryOnly)
    }

    /// `<data directory>/<name>.store`.
    static func defaultURL(name: String) -> URL {
        StoreLocation.defaultDirectory(name: StoreLocation.defaultName).appendingPathComponent("\(name).store")
    }

    /// The store the configuration describes.
    public var storeDescription: StoreDescription {
        if let server { return server }
        return isStoredInMemoryOnly ? .inMemory : .sqlite(url)
    }
}
