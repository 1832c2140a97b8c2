import AmbarCore

/// Keeps the SQL of a statement independent of the values it is run with.
///
/// The store prepares each statement once per connection and keeps it (GRDB's statement cache,
/// which never evicts). SQL that spells out values, or a list of as many placeholders as there are
/// values, is a new statement for every call: the cache, and the process's memory, grow with every
/// fetch. So the store binds every value, passes ID lists as one JSON array, and pads other lists
/// to a few fixed lengths.
package enum StatementShape {
    /// The longest list that is padded; a longer one is a statement of its own length.
    package static let largestPaddedList = 16_384

    /// `values` repeated at the end up to the next power of two (an `IN` list is unchanged by
    /// repeats), so lists of 1 to 16,384 values use one of 15 statements.
    package static func padded<Value>(_ values: [Value]) -> [Value] {
        guard let last = values.last, values.count < largestPaddedList else { return values }
        var length = 1
        while length < values.count { length *= 2 }
        return values + Array(repeating: last, count: length - values.count)
    }

    /// `IN` over an ID list bound as one parameter (``idList(_:)``): the same SQL for every list,
    /// of any length. SQLite still finds each row by its primary key.
    package static let inIDList = "IN (SELECT value FROM json_each(?))"

    /// The parameter for ``inIDList``: the primary keys as a JSON array.
    package static func idList(_ primaryKeys: [Int64]) -> String {
        "[" + primaryKeys.map(String.init).joined(separator: ",") + "]"
    }
}
