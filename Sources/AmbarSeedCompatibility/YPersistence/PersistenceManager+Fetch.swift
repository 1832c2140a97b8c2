import AmbarCore
import AmbarDataStack
import AmbarResults

extension PersistenceManager {
    /// The records of `T` matching `predicate`, fully loaded, from `context` (by default
    /// ``contextForThread()``). Call it on that context's queue.
    ///
    /// - Throws: ``AmbarError/wrongQueue(context:operation:)`` off the context's queue (the seed
    ///   fetched off-queue silently).
    public func fetchRecords<T: DataRecord>(
        _ type: T.Type = T.self, predicate: ObjectPredicate? = nil, sortDescriptors: [ObjectSortDescriptor]? = nil,
        context: ManagedObjectContext? = nil
    ) throws(AmbarError) -> [T] {
        let context = try { () throws(AmbarError) -> ManagedObjectContext in
            if let context { return context }
            return try contextForThread()
        }()
        try context.checkQueue("fetchRecords")
        var request = FetchRequest<T>(predicate: predicate, sortDescriptors: sortDescriptors ?? [])
        request.returnsObjectsAsFaults = false
        return try context.fetch(request)
    }

    /// The models of the records with `uids`, ordered by uid: every record when `uids` is `nil`,
    /// none when it is empty (decision D6: the seed returned everything for an empty list).
    /// Safe on any thread.
    public func fetchModels<T: RecordToModel>(entity: T.Type, uids: [T.UidType]? = nil) throws(AmbarError) -> [T.ModelType] {
        if let uids, uids.isEmpty { return [] }
        let context = try workerContext
        return try context.performAndWait { () throws(AmbarError) -> [T.ModelType] in
            try Self.records(T.self, uids: uids, in: context).map { $0.toModel() }
        }
    }

    /// The model of the record with `uid` (the first by uid order if the store holds duplicates).
    public func fetchModel<T: RecordToModel>(entity: T.Type, uid: T.UidType) throws(AmbarError) -> T.ModelType? {
        try fetchModels(entity: entity, uids: [uid]).first
    }

    /// The records of `T` with `uids` (all for `nil`), sorted by uid, on `context`'s queue.
    static func records<T: DataRecord>(_ type: T.Type, uids: [T.UidType]?, in context: ManagedObjectContext) throws(AmbarError) -> [T] {
        let sort = [ObjectSortDescriptor(key: T.uidKey)]
        guard let uids else {
            var request = FetchRequest<T>(sortDescriptors: sort)
            request.returnsObjectsAsFaults = false
            return try context.fetch(request)
        }
        var found: [T] = []
        let distinct = Array(Set(uids))
        for start in stride(from: 0, to: distinct.count, by: 500) {
            let chunk = distinct[start..<min(start + 500, distinct.count)].map(\.attributeValue)
            var request = FetchRequest<T>(predicate: .isIn(key: T.uidKey, values: chunk, options: []), sortDescriptors: sort)
            request.returnsObjectsAsFaults = false
            found += try context.fetch(request)
        }
        return found.sorted { $0.uid < $1.uid }
    }
}
