extension Schema {
    /// A model class's `#Unique` and `#Index` lists (written by `@Model`; not for direct use).
    public struct _Constraints<T>: @unchecked Sendable {  // key paths are immutable
        let unique: [[PartialKeyPath<T>]]
        let indexes: [[PartialKeyPath<T>]]

        /// The lists of key paths `#Unique` and `#Index` name.
        public init(unique: [[PartialKeyPath<T>]], indexes: [[PartialKeyPath<T>]]) {
            self.unique = unique
            self.indexes = indexes
        }
    }
}
