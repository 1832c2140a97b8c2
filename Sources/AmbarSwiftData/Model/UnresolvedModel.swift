/// What ``ModelContext/model(for:)`` gives for an identifier it cannot resolve (a model never
/// saved, one deleted since, another store's): a model of no class of the schema, with no
/// properties, so that `model(for: id) as? Trip` is `nil` rather than a `Trip` without values.
final class UnresolvedModel: PersistentModel {
    let persistentBackingData: _ModelBacking
    static var schemaMetadata: [Schema.PropertyMetadata] { [] }

    init(backingData: _ModelBacking) {
        persistentBackingData = backingData
    }

    func _$observedValueChanged(_ name: String) {}
}
