import Foundation

extension ManagedObjectContext {
    /// Sets the derived attributes of `objects` (see ``DerivedAttribute``) before a save reaches
    /// the store; a value that changed counts as a change of its object.
    ///
    /// - Throws: a property that cannot be read, or a value that does not fit its attribute
    ///   (``AmbarError/typeMismatch(entity:property:expected:got:)``): the save stops, nothing written.
    func computeDerivedAttributes(_ objects: [ManagedObject]) throws(AmbarError) {
        let now = Date()
        for object in objects where !object.layout.derivedAttributes.isEmpty && object.lifecycle != .deleted {
            object.fireFaultIfNeeded()
            for (i, derivation) in object.layout.derivedAttributes {
                let attribute = object.layout.attributes[i]
                let computed = try derivation.evaluate(on: object, now: now)
                guard let value = computed.coerced(to: attribute.type) else {
                    throw .typeMismatch(
                        entity: object.entityName, property: attribute.name, expected: attribute.type,
                        got: "\(computed.kindName) (derived from \(attribute.derivation ?? "?"))")
                }
                object.setDerivedValue(value, at: i)
            }
        }
    }
}

extension ManagedObject {
    /// Whether the object has changes the store keeps (not only transient ones).
    var hasStoredChanges: Bool {
        changedAttributes.contains { !layout.attributes[$0].isTransient }
            || changedRelationships.contains { !layout.relationships[$0].description.isTransient }
    }
}
