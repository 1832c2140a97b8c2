import AmbarStack
import XCTest

@testable import AmbarResults

/// The in-place edits a results controller makes to its rows agree with the obvious way of
/// making them, for references (whose counts the moves must not disturb) and for any positions.
final class ResultsArrayEditingTests: XCTestCase {
    private final class Row: Equatable, CustomStringConvertible {
        let value: Int
        init(_ value: Int) { self.value = value }
        static func == (a: Row, b: Row) -> Bool { a === b }
        var description: String { "\(value)" }
    }

    func testRemovalAtAscendingIndicesKeepsTheOthersInOrder() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let rows = (0..<Int.random(in: 0...40, using: &generator)).map(Row.init)
            let removed = rows.indices.filter { _ in Bool.random(using: &generator) }
            var edited = rows
            edited.remove(atAscending: removed)
            XCTAssertEqual(edited, rows.indices.filter { !removed.contains($0) }.map { rows[$0] })
        }
    }

    func testRemovalAtIndicesOutOfOrderOrRangeWithoutFault() {
        var rows = (0..<6).map(Row.init)
        rows.remove(atAscending: [4, 1, 4, 99, -1])
        XCTAssertEqual(rows.map(\.value), [0, 2, 3, 5])
    }

    func testInsertionAtAscendingPositionsMatchesOneByOne() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let rows = (0..<Int.random(in: 0...40, using: &generator)).map(Row.init)
            let added = (0..<Int.random(in: 0...10, using: &generator)).map { Row(1_000 + $0) }
            let positions = added.map { _ in Int.random(in: 0...rows.count, using: &generator) }.sorted()
            var expected = rows
            for (offset, row) in added.enumerated() { expected.insert(row, at: positions[offset] + offset) }
            var edited = rows
            edited.insert(added, atAscending: positions)
            XCTAssertEqual(edited, expected)
        }
    }

    func testPositionsOutOfOrderOrRangeAreInsertedWithoutFault() {
        let rows = (0..<5).map(Row.init)
        var edited = rows
        edited.insert([Row(10), Row(11), Row(12)], atAscending: [4, 1, 99])
        XCTAssertEqual(edited.map(\.value), [0, 1, 11, 2, 3, 10, 4, 12])
        var short = rows
        short.insert([Row(20), Row(21)], atAscending: [-3])
        XCTAssertEqual(short.map(\.value), [20, 0, 1, 2, 3, 4, 21])
    }

    func testMovedReferencesAreNeitherLeakedNorFreedEarly() {
        weak var removedRow: Row?
        weak var keptRow: Row?
        do {
            var rows = (0..<10).map(Row.init)
            removedRow = rows[3]
            keptRow = rows[7]
            rows.remove(atAscending: [3])
            rows.insert([Row(100)], atAscending: [2])
            XCTAssertNil(removedRow, "a removed row is released")
            XCTAssertEqual(keptRow?.value, 7)
            XCTAssertEqual(rows.map(\.value), [0, 1, 100, 2, 4, 5, 6, 7, 8, 9])
        }
        XCTAssertNil(keptRow, "rows are released with the array")
    }
}
