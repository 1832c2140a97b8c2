import AmbarStack
import Foundation
import XCTest

/// Rows a fetch reads together keep their values in one shared buffer, block by block: each
/// object still reads its own row's values, in a hierarchy whose entities have different numbers
/// of attributes, across many blocks and through batched faults; a change to one object copies
/// its values, so its neighbours and its own committed values stay as they were read.
final class RowsReadTogetherTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }
    /// Enough rows of two to five attributes for several blocks of 512 values.
    private static let count = 600

    override func setUpWithError() throws {
        try super.setUpWithError()
        model = try ManagedObjectModel(entities: [
            EntityDescription("Shape", properties: [.attribute("name", .string), .attribute("n", .integer64, defaultValue: 0)]),
            EntityDescription(
                "Solid", parent: "Shape",
                properties: [.attribute("depth", .double, defaultValue: 0), .attribute("tag", .string), .attribute("blob", .binary)]),
        ])
        coordinator = try PersistentStoreCoordinator(model: model, store: try store("shapes.sqlite"))
        let writer = privateContext("writer")
        try writer.performAndWait {
            for n in 0..<Self.count {
                let object = try writer.insertObject(entityName: n % 3 == 0 ? "Solid" : "Shape")
                try object.setValue(.string("s\(n)"), forKey: "name")
                try object.setValue(.integer(Int64(n)), forKey: "n")
                if n % 3 == 0 {
                    try object.setValue(.double(Double(n) / 2), forKey: "depth")
                    try object.setValue(.string("t\(n)"), forKey: "tag")
                    try object.setValue(.data(Data([UInt8(n % 256), 7])), forKey: "blob")
                }
            }
            try writer.save()
        }
    }

    private func allShapes(in context: ManagedObjectContext, batchSize: Int = 0) throws -> [ManagedObject] {
        var request = FetchRequest<ManagedObject>(entityName: "Shape", sortDescriptors: [Key<Int64>("n").sorted()])
        request.fetchBatchSize = batchSize
        request.returnsObjectsAsFaults = false
        return try context.fetch(request)
    }

    /// Each object's values are its own row's, whatever the widths of the rows around it.
    private func assertEachReadsItsOwnRow(_ objects: [ManagedObject], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(objects.count, Self.count, file: file, line: line)
        for (n, object) in objects.enumerated() {
            XCTAssertEqual(try object.value(forKey: "name"), .string("s\(n)"), file: file, line: line)
            XCTAssertEqual(try object.value(forKey: "n"), .integer(Int64(n)), file: file, line: line)
            guard n % 3 == 0 else {
                XCTAssertEqual(object.entityName, "Shape", file: file, line: line)
                continue
            }
            XCTAssertEqual(object.entityName, "Solid", file: file, line: line)
            XCTAssertEqual(try object.value(forKey: "depth"), .double(Double(n) / 2), file: file, line: line)
            XCTAssertEqual(try object.value(forKey: "tag"), .string("t\(n)"), file: file, line: line)
            XCTAssertEqual(try object.value(forKey: "blob"), .data(Data([UInt8(n % 256), 7])), file: file, line: line)
        }
    }

    func testEachObjectOfALargeFetchReadsItsOwnRow() throws {
        let reader = privateContext("reader")
        try reader.performAndWait { try assertEachReadsItsOwnRow(try allShapes(in: reader)) }
    }

    func testBatchedFaultsReadTheirOwnRows() throws {
        let reader = privateContext("reader")
        try reader.performAndWait { try assertEachReadsItsOwnRow(try allShapes(in: reader, batchSize: 250)) }
    }

    func testAChangeToOneObjectLeavesItsNeighboursAndItsCommittedValues() throws {
        let reader = privateContext("reader")
        try reader.performAndWait {
            let objects = try allShapes(in: reader)
            let changed = objects[301]
            try changed.setValue(.string("changed"), forKey: "name")
            XCTAssertEqual(try objects[300].value(forKey: "name"), .string("s300"))
            XCTAssertEqual(try objects[302].value(forKey: "name"), .string("s302"))
            XCTAssertEqual(changed.committedValues(forKeys: ["name"]), ["name": .string("s301")])
            XCTAssertEqual(changed.changedValues(), ["name": .string("changed")])

            try reader.rollback()
            XCTAssertEqual(try changed.value(forKey: "name"), .string("s301"), "the committed value comes back")

            try objects[300].setValue(.string("saved"), forKey: "name")
            try reader.save()
            XCTAssertEqual(objects[300].committedValues(forKeys: ["name"]), ["name": .string("saved")])
        }
        let check = privateContext("check")
        try check.performAndWait {
            let objects = try allShapes(in: check)
            XCTAssertEqual(try objects[300].value(forKey: "name"), .string("saved"))
            XCTAssertEqual(try objects[299].value(forKey: "name"), .string("s299"))
            XCTAssertEqual(try objects[301].value(forKey: "name"), .string("s301"))
        }
    }
}
