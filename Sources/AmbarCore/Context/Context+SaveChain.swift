extension ManagedObjectContext {
    /// Saves this context and, when `propagating`, each ancestor in turn, so that a child's changes
    /// reach the store in one call. Each save runs on its context's queue. Stops at the first error,
    /// which it throws; the contexts keep their changes. When the root's save reaches the store,
    /// this context's ``lastSavedToken`` is its token.
    ///
    /// The rule for empty saves is the core's one rule: a context without changes saves nothing
    /// of its own, and its ancestors still save when `propagating` (their own changes reach the
    /// store). The seed libraries' save operations keep their own rules (see the seed
    /// compatibility APIs).
    ///
    /// ```swift
    /// let editor = try stack.editorContext()        // a child of the main context
    /// try editor.performAndWait { () throws(AmbarError) in
    ///     let item = try editor.existingObject(with: itemID)
    ///     try item.setValue("Renamed", forKey: "title")
    ///     try editor.save(propagating: true)         // editor → main → store
    /// }
    /// ```
    public func save(propagating: Bool) throws(AmbarError) {
        try save()
        guard propagating, let parent else { return }
        let before = parent.lastSavedToken
        try parent.performAndWait { () throws(AmbarError) in try parent.save(propagating: true) }
        if let token = parent.lastSavedToken, token != before { recordSavedToken(token) }
    }
}
