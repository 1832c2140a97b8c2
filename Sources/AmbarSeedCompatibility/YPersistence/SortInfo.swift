import AmbarCore
import AmbarDataStack
import AmbarResults

/// One sort column: an attribute and a direction (Y—Persistence's `SortColumn`).
public struct SortColumn: Equatable, Sendable {
    public var key: String
    public var ascending: Bool

    /// A column on `key`, ascending by default.
    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }

    /// The sort descriptor for the column.
    public var descriptor: ObjectSortDescriptor { ObjectSortDescriptor(key: key, ascending: ascending) }
}

/// Sort columns in priority order (Y—Persistence's `SortInfo`).
public struct SortInfo: Equatable, Sendable {
    public var columns: [SortColumn]

    /// Columns in priority order.
    public init(columns: [SortColumn]) { self.columns = columns }

    /// The sort descriptors, in the columns' order.
    public var descriptors: [ObjectSortDescriptor] { columns.map(\.descriptor) }
}
