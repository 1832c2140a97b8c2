/// What a save writes for an updated object, by the set of properties it changed: the stored
/// attributes, the stored to-one relationships and the ledger's list of names.
///
/// The objects of one save usually change the same properties, so one save works each shape out
/// once and every update of that shape shares its arrays; before, every updated object built
/// (and the change set later freed) three arrays and a joined string of its own.
struct UpdateShapes {
    struct Shape {
        /// The changed stored attributes, ascending.
        let attributes: [Int]
        /// The changed stored to-one relationships, ascending.
        let toOne: [Int]
        /// The changed stored properties' names, sorted and joined by commas.
        let ledgerProperties: String
    }

    private struct Key: Hashable {
        let layout: ObjectIdentifier
        let attributes: PropertyIndexSet
        let relationships: PropertyIndexSet
    }

    private var last: (key: Key, shape: Shape)?
    private var known: [Key: Shape] = [:]

    /// The shape of `object`'s changes, as of now.
    mutating func shape(of object: ManagedObject) -> Shape {
        let key = Key(layout: ObjectIdentifier(object.layout), attributes: object.changedAttributes, relationships: object.changedRelationships)
        if let last, last.key == key { return last.shape }
        let shape = known[key] ?? Self.make(object.layout, key)
        known[key] = shape
        last = (key, shape)
        return shape
    }

    private static func make(_ layout: EntityLayout, _ key: Key) -> Shape {
        let attributes = key.attributes.filter { !layout.attributes[$0].isTransient }
        let relationships = key.relationships.filter { !layout.relationships[$0].description.isTransient }
        let names = attributes.map { layout.attributes[$0].name } + relationships.map { layout.relationships[$0].name }
        return Shape(
            attributes: attributes,
            toOne: relationships.filter { !layout.relationships[$0].isToMany },
            ledgerProperties: LedgerEntry.ledgerProperties(names))
    }
}
