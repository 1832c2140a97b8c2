import AmbarCore
import AmbarSQLite
import Foundation

extension PersistentStoreCoordinator {
    /// Opens the store (creating it if needed).
    ///
    /// ```swift
    /// let coordinator = try PersistentStoreCoordinator(
    ///     model: try ManagedObjectModel(declaring: [Project.self]),
    ///     store: .sqlite(URL(fileURLWithPath: "/var/lib/app/store.sqlite")))
    /// ```
    ///
    /// - Throws: ``AmbarError/storeCannotOpen(path:reason:cause:)`` or
    ///   ``AmbarError/incompatibleModel(storeHash:modelHash:)``.
    ///   ``AmbarError/storeDamaged(path:reason:)`` when the file is damaged and `recovery` is
    ///   ``DamagedStoreRecovery/fail``.
    public convenience init(
        model: ManagedObjectModel, store description: StoreDescription, name: String? = nil,
        recovery: DamagedStoreRecovery = .fail
    ) throws(AmbarError) {
        let store: any PersistentStore
        switch description {
        case .sqlite(let url): store = try SQLiteStore.open(.file(url), model: model, recovery: recovery)
        case .inMemory: store = try SQLiteStore.open(.inMemory, model: model)
        case .server(let server): store = try server.connector.openStore(model: model)
        }
        self.init(model: model, description: description, name: name, opened: store)
    }

    /// The model an existing SQLite store was created with (every store keeps its model), so tools
    /// can open a store without knowing its model in advance.
    ///
    /// - Throws: ``AmbarError/storeCannotOpen(path:reason:cause:)`` when the file is missing, not an
    ///   SQLite database, or not an Ambar store.
    public static func storedModel(at url: URL) throws(AmbarError) -> ManagedObjectModel {
        try SQLiteStore.storedModel(at: url)
    }

    /// The model an existing store was created with, wherever it is: an SQLite file, or a
    /// database on a server.
    ///
    /// - Throws: ``AmbarError/storeCannotOpen(path:reason:cause:)`` when there is no Ambar store there;
    ///   ``AmbarError/serverUnavailable(server:operation:reason:cause:)`` when the server cannot be reached.
    public static func storedModel(in description: StoreDescription) throws(AmbarError) -> ManagedObjectModel {
        switch description {
        case .sqlite(let url): return try SQLiteStore.storedModel(at: url)
        case .inMemory: throw .storeCannotOpen(path: ":memory:", reason: "a store in memory keeps nothing between coordinators")
        case .server(let server): return try server.connector.storedModel()
        }
    }
}
