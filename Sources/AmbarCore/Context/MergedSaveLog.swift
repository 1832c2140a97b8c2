/// The saves a context merged without prefetched rows (its own process's saves, mostly), kept
/// until no merge with prefetched rows can need them.
///
/// Rows read ahead of a merge (``PrefetchedRows``) reflect every transaction up to the ledger
/// token they were read through. A save this process committed after that, and merged into the
/// context before the rows are applied, is newer than them: an object it touched that the
/// context did not hold then (so no version is there to compare) must be read from the store, not
/// from the rows. The log names those objects. It holds the notifications' sets (no copies) and
/// forgets the oldest beyond a bound; rows read through a forgotten token are not used at all.
struct MergedSaveLog {
    private struct Entry {
        /// The save's ledger token; `Int64.max` when the notification had none (always newer).
        let token: Int64
        let inserted: Set<ManagedObjectID>
        let updated: Set<ManagedObjectID>
        let deleted: Set<ManagedObjectID>
        var count: Int { inserted.count + updated.count + deleted.count }
    }

    /// At most this many saves are kept.
    static let maximumSaves = 64
    /// At most about this many object IDs are kept, over all saves.
    static let maximumObjects = 50_000

    private var entries: [Entry] = []
    private var objects = 0
    /// Saves with tokens up to this one may have been forgotten.
    private var forgottenThrough: Int64 = 0

    /// Records a save merged without prefetched rows.
    mutating func record(_ note: DidSaveNotification) {
        let entry = Entry(token: note.token ?? .max, inserted: note.inserted, updated: note.updated, deleted: note.deleted)
        guard entry.count > 0 else { return }
        entries.append(entry)
        objects += entry.count
        while entries.count > Self.maximumSaves || (objects > Self.maximumObjects && entries.count > 1) {
            let dropped = entries.removeFirst()
            objects -= dropped.count
            forgottenThrough = max(forgottenThrough, dropped.token)
        }
        if objects > Self.maximumObjects, let only = entries.first {
            entries = []
            objects = 0
            forgottenThrough = max(forgottenThrough, only.token)
        }
    }

    /// Removes from `rows` every object a save after their read touched (all of them when such a
    /// save may have been forgotten), then forgets the saves the rows already reflect: later rows
    /// are read through later tokens.
    mutating func screen(_ rows: inout PrefetchedRows) {
        if forgottenThrough > rows.readThrough {
            rows = PrefetchedRows()
            return
        }
        for entry in entries where entry.token > rows.readThrough {
            rows.remove(entry.inserted)
            rows.remove(entry.updated)
            rows.remove(entry.deleted)
        }
        let kept = entries.filter { $0.token > rows.readThrough }
        if kept.count != entries.count {
            entries = kept
            objects = kept.reduce(0) { $0 + $1.count }
        }
    }
}
