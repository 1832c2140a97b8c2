/// Puts objects in the order of their IDs (``PredicateEvaluation/idPrecedes(_:_:)``): permanent
/// IDs by primary key, then temporary ones by their number.
///
/// The IDs are copied next to their objects before sorting, so comparisons read contiguous
/// memory rather than each object's header; a save sorts every object it writes, and following
/// the object references was a twentieth of a 10,000-object update.
enum ObjectIDOrder {
    /// `objects`, sorted by ID.
    static func sorted(_ objects: some Sequence<ManagedObject>) -> [ManagedObject] {
        var keyed = objects.map { (id: $0.objectID, object: $0) }
        keyed.sort { PredicateEvaluation.idPrecedes($0.id, $1.id) }
        return keyed.map(\.object)
    }

    /// `objects`, sorted by ID; returned as they are when they already are (objects in the
    /// order they were inserted are in the order of their temporary IDs), which one pass finds.
    static func sorted(_ objects: [ManagedObject]) -> [ManagedObject] {
        var previous: ManagedObjectID?
        for object in objects {
            let id = object.objectID
            if let previous, !PredicateEvaluation.idPrecedes(previous, id) { return sorted(objects[...]) }
            previous = id
        }
        return objects
    }
}
