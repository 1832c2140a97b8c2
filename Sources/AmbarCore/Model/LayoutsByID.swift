/// The layouts of object IDs' entities, for loops over many IDs: each run of IDs of one entity
/// looks its layout up by name once, and the others compare one address.
///
/// A save's changes come sorted by entity, so a loop over 5,000 inserts hashes one entity name
/// instead of 5,000 (a name lookup per insert in each of a save's passes was a twentieth of an
/// import's time).
package struct LayoutsByID {
    private let entities: [String: EntityLayout]
    private var lastScope: UnsafeMutableRawPointer?
    private var lastLayout: EntityLayout?

    /// Looks layouts up in `resolved`.
    package init(_ resolved: ResolvedModel) { self.entities = resolved.entities }

    /// The layout of `id`'s entity; `nil` when the model has no such entity.
    package mutating func layout(of id: ManagedObjectID) -> EntityLayout? {
        let scope = id.scope.toOpaque()
        if scope == lastScope { return lastLayout }
        let found = entities[id.entityName]
        lastScope = scope
        lastLayout = found
        return found
    }
}
