extension ManagedObjectContext {
    /// Saves this context and, when `propagating`, each ancestor in turn, so that a child's changes
    /// reach the store in one call. Each save runs on its context's queue. Stops at the first error,
    /// which it throws; the contexts keep their changes.
    public func save(propagating: Bool) throws(AmbarError) {
        try save()
        guard propagating, let parent else { return }
        try parent.performAndWait { () throws(AmbarError) in try parent.save(propagating: true) }
    }
}
