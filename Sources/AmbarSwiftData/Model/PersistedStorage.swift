/// What a persisted property stores in the model itself: nothing (its value lives in the
/// backing data). The `init` accessor `@Model` writes initializes it, which tells the compiler
/// the property is initialized. Not for direct use.
public struct _PersistedStorage: Sendable {
    /// The placeholder.
    public init() {}
}
