import AmbarCore
import AmbarSQL

extension SQLServerConnector {
    /// Opens the PostgreSQL store in this connector's database.
    package func openStore(model: ManagedObjectModel) throws(AmbarError) -> any PersistentStore {
        try PostgreSQLStore.open(self, model: model)
    }

    /// The model the PostgreSQL store in this connector's database was created with.
    package func storedModel() throws(AmbarError) -> ManagedObjectModel {
        try PostgreSQLStore.storedModel(self)
    }
}
