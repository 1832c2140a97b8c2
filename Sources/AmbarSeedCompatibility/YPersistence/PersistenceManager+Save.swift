import AmbarCore
import AmbarDataStack
import AmbarResults

extension PersistenceManager {
    /// Saves `models` as records of `T`, in one transaction (decision D7: on failure nothing
    /// changes; the seed's overwrite deleted first and could lose everything).
    ///
    /// - `shouldOverwrite: true`: afterwards the entity holds exactly these models — existing
    ///   records with a model's uid are updated (keeping their IDs), all others deleted. An empty
    ///   list empties the entity.
    /// - `shouldOverwrite: false`: upsert by uid — existing records updated, duplicates of a uid in
    ///   the store removed, new ones inserted. An empty list does nothing.
    ///
    /// Either way, models repeating a uid collapse into the last of them (the seed inserted
    /// duplicates).
    public func save<T: RecordFromModel>(entity: T.Type, models: [T.ModelType], shouldOverwrite: Bool) throws(AmbarError) {
        if models.isEmpty && !shouldOverwrite { return }
        var latest: [T.UidType: T.ModelType] = [:]
        var order: [T.UidType] = []
        for model in models {
            if latest.updateValue(model, forKey: model.uid) == nil { order.append(model.uid) }
        }
        let context = try workerContext
        try context.performAndWait { () throws(AmbarError) in
            let existing = try Self.records(T.self, uids: shouldOverwrite ? nil : order, in: context)
            var kept: [T.UidType: T] = [:]
            for record in existing {
                if latest[record.uid] == nil || kept[record.uid] != nil {
                    try context.delete(record)  // not among the models (overwrite), or a duplicate
                } else {
                    kept[record.uid] = record
                }
            }
            for uid in order {
                guard let model = latest[uid] else { continue }
                let record: T
                if let existing = kept[uid] { record = existing } else { record = try context.insert(T.self) }
                record.fromModel(model)
            }
            do throws(AmbarError) {
                try context.save()
            } catch {
                // try?: cleanup; the save's own error is thrown below
                try? context.rollback()
                throw error
            }
        }
    }
}
