/// One sort key of a fetch or a results controller.
///
/// Ordering is the same in SQL and in memory: `nil` sorts first when ascending, text compares its
/// Unicode scalars (or folded, with options), and ties are broken by primary key.
public struct ObjectSortDescriptor: Sendable, Hashable {
    /// The key path sorted on (an attribute, optionally behind to-one relationships).
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// Text options (case- or diacritic-insensitive ordering).
    public var options: TextOptions

    /// Creates a sort descriptor.
    public init(key: String, ascending: Bool = true, options: TextOptions = []) {
        self.key = key
        self.ascending = ascending
        self.options = options
    }
}
