import AmbarCore
import AmbarDataStack
import AmbarResults

extension PersistenceManager {
    /// Records not uploaded yet (`isUploaded == false`), in `T.sort` order. On `context`'s queue.
    public func fetchRecordsToUpload<T: SyncRecord>(_ type: T.Type = T.self, context: ManagedObjectContext? = nil) throws(AmbarError) -> [T] {
        try fetchRecords(
            T.self, predicate: .comparison(key: T.isUploadedKey, op: .equal, value: .bool(false), options: []),
            sortDescriptors: T.sort?.descriptors, context: context)
    }

    /// Records to update remotely: not uploaded and not deleted.
    public func fetchRecordsToUpdate<T: SyncRecord>(_ type: T.Type = T.self, context: ManagedObjectContext? = nil) throws(AmbarError) -> [T] {
        try fetchRecords(
            T.self,
            predicate: .and([
                .comparison(key: T.isUploadedKey, op: .equal, value: .bool(false), options: []),
                .comparison(key: T.wasDeletedKey, op: .equal, value: .bool(false), options: []),
            ]), sortDescriptors: T.sort?.descriptors, context: context)
    }

    /// Records to delete remotely: not uploaded and deleted locally.
    public func fetchRecordsToDelete<T: SyncRecord>(_ type: T.Type = T.self, context: ManagedObjectContext? = nil) throws(AmbarError) -> [T] {
        try fetchRecords(
            T.self,
            predicate: .and([
                .comparison(key: T.isUploadedKey, op: .equal, value: .bool(false), options: []),
                .comparison(key: T.wasDeletedKey, op: .equal, value: .bool(true), options: []),
            ]), sortDescriptors: T.sort?.descriptors, context: context)
    }

    /// Marks the not-yet-uploaded records with `uids` as uploaded, and saves.
    public func markRecordsAsUploaded<T: SyncRecord>(entity: T.Type, uids: [T.UidType]) throws(AmbarError) {
        guard !uids.isEmpty else { return }
        try mark(T.self, uids: uids, where: .comparison(key: T.isUploadedKey, op: .equal, value: .bool(false), options: [])) { $0.isUploaded = true }
    }

    /// Marks the records with `uids` as deleted locally (and so not uploaded), and saves.
    public func markRecordsAsDeleted<T: SyncRecord>(entity: T.Type, uids: [T.UidType]) throws(AmbarError) {
        guard !uids.isEmpty else { return }
        try mark(T.self, uids: uids, where: .comparison(key: T.wasDeletedKey, op: .equal, value: .bool(false), options: [])) {
            $0.wasDeleted = true
            $0.isUploaded = false
        }
    }

    /// Marks every record not yet deleted as deleted locally, and saves.
    public func markAllRecordsAsDeleted<T: SyncRecord>(entity: T.Type) throws(AmbarError) {
        try mark(T.self, uids: nil, where: .comparison(key: T.wasDeletedKey, op: .equal, value: .bool(false), options: [])) {
            $0.wasDeleted = true
            $0.isUploaded = false
        }
    }

    private func mark<T: SyncRecord>(_ type: T.Type, uids: [T.UidType]?, where condition: ObjectPredicate, _ change: (T) -> Void) throws(AmbarError) {
        let context = try workerContext
        try context.performAndWait { () throws(AmbarError) in
            var predicate = condition
            if let uids { predicate = predicate && .isIn(key: T.uidKey, values: Array(Set(uids)).map(\.attributeValue), options: []) }
            var request = FetchRequest<T>(predicate: predicate)
            request.returnsObjectsAsFaults = false
            for record in try context.fetch(request) { change(record) }
            try context.save()
        }
    }
}
