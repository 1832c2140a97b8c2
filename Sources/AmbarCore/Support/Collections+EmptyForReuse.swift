/// The most entries a context's table keeps room for when it is emptied: a table of this size
/// is a few MB at most.
let reusedTableCapacity = 65_536

extension Dictionary {
    /// Removes every entry, keeping the table's storage when it held at most
    /// `reusedTableCapacity` entries: a context that saves or resets in batches then fills the
    /// same table again instead of growing a new one, rehashing, at every batch. A larger table
    /// is freed, so one large fetch does not hold its memory for the context's life.
    mutating func emptyForReuse() {
        removeAll(keepingCapacity: count <= reusedTableCapacity)
    }
}

extension Set {
    /// Removes every member, keeping the storage as `Dictionary.emptyForReuse()` does.
    mutating func emptyForReuse() {
        removeAll(keepingCapacity: count <= reusedTableCapacity)
    }
}

extension Array {
    /// Removes every element, keeping the storage as `Dictionary.emptyForReuse()` does.
    mutating func emptyForReuse() {
        removeAll(keepingCapacity: count <= reusedTableCapacity)
    }
}
