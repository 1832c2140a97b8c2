import AmbarStack
import Foundation

extension ModelContext {
    /// The models `descriptor` describes.
    ///
    /// - Throws: ``SwiftDataError``: ``SwiftDataError/Code/unsupportedPredicate`` and
    ///   ``SwiftDataError/Code/unsupportedSortDescriptor`` name what has no equivalent in a
    ///   store query; ``SwiftDataError/Code/fetchFailed`` carries the store's error, or names a
    ///   stored value that cannot be read as its property's type.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        let request = try descriptor.request()
        return try onQueue { () throws -> [T] in
            let objects: [ManagedObject]
            do {
                objects = try managedContext.fetch(request)
            } catch {
                throw SwiftDataError(.fetchFailed, "fetching \(T.self) failed", cause: error)
            }
            return try models(for: objects, as: T.self)
        }
    }

    /// The models `descriptor` describes (SwiftData's batched fetch: models load their values as
    /// they are read, whatever the batch size).
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> [T] {
        try fetch(descriptor)
    }

    /// How many models `descriptor` describes (its limit and offset apply).
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        let request = try descriptor.request()
        return try onQueue { () throws -> Int in
            do {
                return try managedContext.count(for: request)
            } catch {
                throw SwiftDataError(.fetchFailed, "counting \(T.self) failed", cause: error)
            }
        }
    }

    /// The identifiers of the models `descriptor` describes, without making the models.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        let request = try descriptor.request()
        return try onQueue { () throws -> [PersistentIdentifier] in
            do {
                return try managedContext.fetchObjectIDs(request).map(PersistentIdentifier.init)
            } catch {
                throw SwiftDataError(.fetchFailed, "fetching identifiers of \(T.self) failed", cause: error)
            }
        }
    }

    /// The identifiers of the models `descriptor` describes (SwiftData's batched variant).
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> [PersistentIdentifier] {
        try fetchIdentifiers(descriptor)
    }

    /// Calls `block` with each model `descriptor` describes, fetching `batchSize` at a time.
    ///
    /// - Parameters:
    ///   - descriptor: the models, their order, offset and limit.
    ///   - batchSize: how many models each fetch reads.
    ///   - allowEscapingMutations: accepted; models stay registered either way.
    ///   - block: called with each model in turn; what it throws ends the enumeration.
    /// - Throws: what `block` throws, or what ``fetch(_:)`` throws.
    public func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int = 5000, allowEscapingMutations: Bool = false, block: (T) throws -> Void
    ) throws {
        var page = descriptor
        let start = descriptor.fetchOffset ?? 0
        let limit = descriptor.fetchLimit
        var delivered = 0
        let size = max(batchSize, 1)
        while limit.map({ delivered < $0 }) ?? true {
            page.fetchOffset = start + delivered
            page.fetchLimit = limit.map { min(size, $0 - delivered) } ?? size
            let models = try fetch(page)
            for model in models { try block(model) }
            delivered += models.count
            if models.count < page.fetchLimit ?? size { break }
        }
    }

    /// The model with identifier `persistentModelID`: the one the context has, or one for the
    /// stored object (its values are read when first used).
    ///
    /// An identifier that resolves to no stored model (an unsaved model's, a deleted one's,
    /// another store's) is reported (the next save throws it) and gives a model of no class of
    /// the schema, so that `model(for: id) as? Trip` is `nil`.
    public func model(for persistentModelID: PersistentIdentifier) -> any PersistentModel {
        do {
            guard let id = persistentModelID.objectID else {
                throw SwiftDataError(.fetchFailed, "\(persistentModelID) is the identifier of a model never inserted into a context")
            }
            return try onQueue { () throws -> any PersistentModel in try anyModel(for: try managedContext.object(with: id)) }
        } catch {
            failures.record("find the model of \(persistentModelID)", error)
            return UnresolvedModel(backingData: _ModelBacking())
        }
    }
}
