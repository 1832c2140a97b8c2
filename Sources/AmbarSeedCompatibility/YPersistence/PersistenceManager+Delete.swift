import AmbarCore
import AmbarDataStack
import AmbarResults
import Foundation

extension PersistenceManager {
    /// Deletes the records with `uid`.
    public func delete<T: DataRecord>(entity: T.Type, uid: T.UidType) throws(AmbarError) {
        try delete(entity: entity, uids: [uid])
    }

    /// Deletes the records with `uids` (duplicates included) in one transaction. An empty list
    /// deletes nothing; unknown uids are ignored.
    @discardableResult
    public func delete<T: DataRecord>(entity: T.Type, uids: [T.UidType]) throws(AmbarError) -> Int {
        guard !uids.isEmpty else { return 0 }
        return try delete(entity: entity, predicate: .isIn(key: T.uidKey, values: Array(Set(uids)).map(\.attributeValue), options: []))
    }

    /// Deletes the record of `model`.
    public func deleteModel<T: ModelRepresentable>(entity: T.Type, model: T.ModelType) throws(AmbarError) {
        try delete(entity: entity, uids: [model.uid])
    }

    /// Deletes the records of `models`; an empty list deletes nothing.
    public func deleteModels<T: ModelRepresentable>(entity: T.Type, models: [T.ModelType]) throws(AmbarError) {
        try delete(entity: entity, uids: models.map(\.uid))
    }

    /// Deletes the records that `predicate` (from `#Predicate`) matches, as
    /// ``delete(entity:predicate:saveEvery:)-(_,ObjectPredicate?,_)`` does, for a declared class.
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` for an expression with no store equivalent,
    ///   and the errors of the save.
    @discardableResult
    public func delete<T: DataRecord & DeclaredModel>(entity: T.Type, predicate: Predicate<T>, saveEvery: Int = 500) throws(AmbarError) -> Int {
        try delete(entity: entity, predicate: try ObjectPredicate(predicate), saveEvery: saveEvery)
    }

    /// Deletes the records matching `predicate` (all when `nil`), with their delete rules, reading
    /// them `saveEvery` at a time but saving once: one transaction, so a failure deletes nothing
    /// (decision D7; the seed saved every chunk). Returns how many were deleted.
    @discardableResult
    public func delete<T: DataRecord>(entity: T.Type, predicate: ObjectPredicate?, saveEvery: Int = 500) throws(AmbarError) -> Int {
        let context = try workerContext
        return try context.performAndWait { () throws(AmbarError) -> Int in
            var request = FetchRequest<T>(predicate: predicate)
            request.fetchBatchSize = max(1, saveEvery)
            let records = try context.fetch(request)
            for record in records { try context.delete(record) }
            do throws(AmbarError) {
                try context.save()
            } catch {
                // try?: cleanup; the save's own error is thrown below
                try? context.rollback()
                throw error
            }
            return records.count
        }
    }

    /// Deletes every record of `T` through the context graph (delete rules apply).
    @discardableResult
    public func manualDeleteAll<T: DataRecord>(entity: T.Type, saveEvery: Int = 500) throws(AmbarError) -> Int {
        try delete(entity: entity, predicate: nil, saveEvery: saveEvery)
    }

    /// Deletes every row of `T`'s entity in the store at once (no delete rules, no objects), and
    /// merges the deletions into ``mainContext`` — on the main queue, at once when called there.
    public func batchDeleteAll<T: DataRecord>(entity: T.Type) throws(AmbarError) {
        try batchDeleteAll(entityName: T.entityName)
    }
}
