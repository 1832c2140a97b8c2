/// One object's attribute values, in its entity layout's attribute order.
///
/// The values of rows a store reads together live in one shared buffer (``RowValueBlock``), and
/// each row's values are a view of its run of that buffer: a fetch of many rows makes one
/// allocation per block of rows instead of one array per row. The first change of a value copies
/// the row's run into storage of its own, as an array copies on write, so rows never see each
/// other's changes. Values made one object at a time (an insert, a merge) are a view of a whole
/// array.
///
/// A view keeps its whole block alive: an object that outlives the other rows of its fetch keeps
/// at most ``RowValueBlock/manyRows`` values alive for as long as it holds the values it was
/// fetched with (as its current or its committed values).
package struct RowValues: Sendable, Equatable {
    // A whole buffer and the run of it that is this row's: two words, where an `ArraySlice`
    // takes four, in every object twice (current and committed values).
    private var storage: [AttributeValue]
    private var start: Int32
    private var width: Int32

    /// The values of an array (no copy).
    package init(_ values: [AttributeValue]) {
        storage = values
        start = 0
        width = Int32(values.count)
    }

    /// The run `range` of a block's buffer.
    init(block: [AttributeValue], range: Range<Int>) {
        storage = block
        start = Int32(range.lowerBound)
        width = Int32(range.count)
    }

    /// No values: an object that was never read from the store has no committed ones.
    package static let none = RowValues([])

    /// How many values (the layout's attribute count, or 0 for ``none``).
    package var count: Int { Int(width) }

    /// Whether there are no values.
    package var isEmpty: Bool { width == 0 }

    /// The attribute indices, from 0.
    package var indices: Range<Int> { 0..<Int(width) }

    /// The value of the attribute at `index` (0-based, in the layout's attribute order).
    package subscript(index: Int) -> AttributeValue {
        get {
            precondition(index >= 0 && index < Int(width), "attribute index out of range")
            return storage[Int(start) + index]
        }
        set {
            precondition(index >= 0 && index < Int(width), "attribute index out of range")
            if start != 0 || Int(width) != storage.count {
                // A run of a shared block: the row takes a copy of its own values first.
                storage = Array(storage[Int(start)..<Int(start + width)])
                start = 0
            }
            storage[index] = newValue
        }
    }

    /// The value at `index`, or nil when there is none there.
    package subscript(safe index: Int) -> AttributeValue? {
        index >= 0 && index < Int(width) ? self[index] : nil
    }

    package static func == (lhs: RowValues, rhs: RowValues) -> Bool {
        lhs.width == rhs.width
            && lhs.storage[Int(lhs.start)..<Int(lhs.start + lhs.width)].elementsEqual(rhs.storage[Int(rhs.start)..<Int(rhs.start + rhs.width)])
    }
}

/// The shared buffer that ``RowValues`` of rows read together are views of: a store appends each
/// row's values, and hands out a row's view once its block is complete (``row(_:)``), because a
/// buffer cannot grow while views of it exist.
///
/// ```swift
/// var block = RowValueBlock()
/// block.beginRow(width: 2)
/// block.append(.string("a"))
/// block.append(.integer(1))
/// block.endRow()
/// let first = block.row(0)  // a view of the block's buffer
/// block.removeAll()         // the next row starts a new buffer
/// ```
package struct RowValueBlock {
    /// The most values a block of many rows holds (about a hundred rows of a handful of
    /// attributes, 12 KiB): one allocation per block instead of one per row, and what one object
    /// that outlives its fetch can keep alive at most.
    package static let manyRows = 512

    // Inlinable, with the fields its inlined methods use, because stores append every value
    // of every row they read through it from their own modules.
    @usableFromInline let capacity: Int
    @usableFromInline var buffer: [AttributeValue] = []
    @usableFromInline var runs: [Range<Int>] = []

    /// A block whose first row reserves room for `capacity` values (at least that row's width):
    /// ``manyRows`` for the rows of a fetch, 0 for a single row.
    package init(capacity: Int = RowValueBlock.manyRows) {
        self.capacity = capacity
    }

    /// Whether a row of `width` more values fits without growing the buffer, and the block holds
    /// fewer than ``manyRows`` rows (rows of no attributes fill it too). An empty block takes any
    /// row.
    @inlinable
    package func hasRoom(for width: Int) -> Bool {
        runs.isEmpty || (buffer.count + width <= capacity && runs.count < Self.manyRows)
    }

    /// Starts a row of `width` values; append them with ``append(_:)``, then call ``endRow()``.
    @inlinable
    package mutating func beginRow(width: Int) {
        if runs.isEmpty { buffer.reserveCapacity(Swift.max(capacity, width)) }
        runs.append(buffer.count..<buffer.count)
    }

    /// Appends a value to the row begun last.
    @inlinable
    package mutating func append(_ value: AttributeValue) {
        buffer.append(value)
    }

    /// Ends the row begun last.
    @inlinable
    package mutating func endRow() {
        let last = runs.count - 1
        runs[last] = runs[last].lowerBound..<buffer.count
    }

    /// The values of row `index` (in the order rows were begun), a view of the block's buffer.
    /// Take every row's before ``removeAll()``.
    package func row(_ index: Int) -> RowValues {
        RowValues(block: buffer, range: runs[index])
    }

    /// Empties the block: the views handed out keep its buffer, and the next row starts a new one.
    package mutating func removeAll() {
        buffer = []
        runs.removeAll(keepingCapacity: true)
    }
}
