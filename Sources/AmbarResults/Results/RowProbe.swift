import AmbarCore

/// Compares rows already shown with a changed object's sort key during a binary search, and
/// remembers the first row whose sort values could not be read (its fault could not be
/// loaded): such a row is taken to sort after the key, so the search ends, but the results may
/// then be out of order and must be fetched again.
struct RowProbe {
    let sorts: [ObjectSortDescriptor]
    /// The first row that could not be read, and why.
    private(set) var unreadable: (ManagedObjectID, AmbarError)?

    init(sorts: [ObjectSortDescriptor]) {
        self.sorts = sorts
    }

    /// Whether `row` sorts before the object whose key is `key`.
    mutating func precedes(_ row: ManagedObject, _ key: PredicateEvaluation.SortKey) -> Bool {
        do {
            return try PredicateEvaluation.precedes(row, key, sorts)
        } catch {
            if unreadable == nil { unreadable = (row.objectID, error) }
            return false
        }
    }
}
