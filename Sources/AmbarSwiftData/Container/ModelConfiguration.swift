import AmbarStack
import Foundation

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

    private init(name: String, schema: Schema?, url: URL, isStoredInMemoryOnly: Bool, allowsSave: Bool) {
        self.name = name
        self.schema = schema
        self.url = url
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.allowsSave = allowsSave
    }

    /// `<data directory>/<name>.store`.
    static func defaultURL(name: String) -> URL {
        StoreLocation.defaultDirectory(name: StoreLocation.defaultName).appendingPathComponent("\(name).store")
    }

    /// The store the configuration describes.
    var storeDescription: StoreDescription {
        isStoredInMemoryOnly ? .inMemory : .sqlite(url)
    }
}
