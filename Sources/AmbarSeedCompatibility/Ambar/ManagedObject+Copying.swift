import AmbarCore
import AmbarDataStack
import AmbarResults

extension ManagedObject {
    /// Copies every attribute value of `other` — an object of the same entity, possibly from
    /// another context on the same queue — into this object. Relationships are left as they are
    /// (Ambar's `updateMatchingValues(from:)`).
    ///
    /// - Throws: ``AmbarError/invalidObjectID(_:)`` when `other` is of another entity.
    public func updateMatchingValues(from other: ManagedObject) throws(AmbarError) {
        guard other.entityName == entityName else {
            throw .invalidObjectID("cannot copy values from a \(other.entityName) into a \(entityName)")
        }
        for attribute in entity.attributes {
            try setValue(try other.value(forKey: attribute.name), forKey: attribute.name)
        }
    }
}
