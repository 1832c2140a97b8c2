extension AmbarError {
    /// Whether the error says the store could not be read or written just now (a database server
    /// out of reach, a storage or descriptor failure) rather than that the request itself is
    /// wrong: the same operation can succeed later, unchanged.
    ///
    /// ```swift
    /// do {
    ///     try context.save()
    /// } catch let error where error.isTransient {
    ///     // try again later: nothing was written
    /// }
    /// ```
    public var isTransient: Bool {
        switch self {
        case .serverUnavailable, .storage, .tooManyOpenFiles, .storeFull: return true
        default: return false
        }
    }
}
