import AmbarStack

extension Schema {
    /// What a context does with one persisted property, kept once per entity by the schema: a
    /// class, so that going through an entity's properties for every model made or inserted
    /// retains one reference per property, not each of the metadata's fields.
    final class PropertyAccess: @unchecked Sendable {  // immutable; its closures capture only types, names and key paths
        /// The property's name.
        let name: String
        /// Writes a value of the property's type (given before insertion) into a managed object.
        let writePending: (Any, ManagedObject, ModelContext) throws -> Void
        /// For a persisted `let`: reads it from the model.
        let readConstant: ((any PersistentModel) -> Any?)?
        /// For a property whose type has no placeholder: reads it, for a model made for a stored
        /// object.
        let materialize: ((ManagedObject, ModelContext) throws -> Any)?

        init(_ metadata: PropertyMetadata) {
            name = metadata.name
            writePending = metadata.writePending
            readConstant = metadata.readConstant
            materialize = metadata.materialize
        }
    }

    /// Each entity's model class, its persisted properties, and those that must be read when a
    /// model is made: found once per model made or fetch, with one lookup.
    final class EntityAccess: @unchecked Sendable {  // immutable
        /// The entity's name.
        let name: String
        let type: any PersistentModel.Type
        let properties: [PropertyAccess]
        /// The persisted properties, by name.
        let propertiesByName: [String: PropertyAccess]
        /// Those read when a model is made for a stored object.
        let materialized: [PropertyAccess]
        /// The persisted `let`s, read from the model when it is inserted.
        let constants: [PropertyAccess]

        init(_ type: any PersistentModel.Type, _ metadata: [PropertyMetadata]) {
            self.name = type.entityName
            self.type = type
            properties = metadata.map(PropertyAccess.init)
            propertiesByName = Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            materialized = properties.filter { $0.materialize != nil }
            constants = properties.filter { $0.readConstant != nil }
        }
    }
}
