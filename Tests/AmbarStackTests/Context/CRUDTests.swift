import AmbarStack
import Foundation
import XCTest

final class CRUDTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testInsertSaveFetchUpdateDelete() throws {
        let context = privateContext()
        try context.performAndWait {
            let ada = try context.insert(Employee.self)
            ada.name = "Ada"
            ada.salary = 100
            XCTAssertTrue(ada.isInserted)
            XCTAssertTrue(ada.objectID.isTemporaryID)
            XCTAssertEqual(ada.age, 30, "default value applied")
            try context.save()
            XCTAssertFalse(ada.isInserted)
            XCTAssertFalse(ada.objectID.isTemporaryID)
            XCTAssertFalse(context.hasChanges)
        }
        // A second context (same coordinator) sees the row.
        let other = privateContext("other")
        try other.performAndWait {
            let all = try other.fetch(FetchRequest<Employee>())
            XCTAssertEqual(all.count, 1)
            XCTAssertEqual(all[0].name, "Ada")
            all[0].salary = 200
            XCTAssertTrue(all[0].isUpdated)
            XCTAssertEqual(all[0].changedValues()["salary"], .double(200))
            XCTAssertEqual(all[0].committedValues(forKeys: ["salary"])["salary"], .double(100))
            try other.save()
            try other.delete(all[0])
            XCTAssertTrue(all[0].isDeleted)
            try other.save()
            XCTAssertEqual(try other.count(for: FetchRequest<Employee>()), 0)
        }
    }

    func testEveryAttributeTypeRoundTrips() throws {
        let model = try TestModel.allTypes()
        let coordinator = try PersistentStoreCoordinator(model: model, store: try store("types.sqlite"))
        let values: [String: AttributeValue] = [
            "text": .string("héllo ✓"), "i16": .integer(-32768), "i32": .integer(2_147_483_647),
            "i64": .integer(Int64.min), "dbl": .double(3.141592653589793), "flt": .double(Double(Float(1.5))),
            "flag": .bool(true), "when": .date(Date(timeIntervalSinceReferenceDate: 123_456.789)),
            "blob": .data(Data([0, 1, 2, 255])), "uid": .uuid(UUID()), "link": .url(URL(string: "https://example.com/a?b=c")!),
            "amount": .decimal(Decimal(string: "12345678901234567890.123456789")!),
        ]
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try writer.performAndWait {
            let sample = try writer.insertObject(entityName: "Sample")
            for (key, value) in values { try sample.setValue(value, forKey: key) }
            try writer.save()
        }
        let reopened = try PersistentStoreCoordinator(model: model, store: try store("types.sqlite"))
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: reopened)
        try reader.performAndWait {
            let sample = try XCTUnwrap(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Sample")).first)
            for (key, value) in values {
                XCTAssertEqual(try sample.value(forKey: key), value, key)
            }
        }
    }

    /// Empty text and empty bytes read back empty, not missing, and missing ones missing: a
    /// fetch reads text and bytes by their pointer, which is NULL for both an empty blob and NULL.
    func testEmptyAndMissingTextAndBytesStayApart() throws {
        let model = try TestModel.allTypes()
        let coordinator = try PersistentStoreCoordinator(model: model, store: try store("types.sqlite"))
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try writer.performAndWait {
            let empty = try writer.insertObject(entityName: "Sample")
            try empty.setValue(.string(""), forKey: "text")
            try empty.setValue(.data(Data()), forKey: "blob")
            try empty.setValue(.integer(1), forKey: "i16")
            let missing = try writer.insertObject(entityName: "Sample")
            try missing.setValue(.integer(2), forKey: "i16")
            try writer.save()
        }
        let reader = ManagedObjectContext(
            concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: model, store: try store("types.sqlite")))
        try reader.performAndWait {
            let samples = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Sample", sortDescriptors: [Key<Int>("i16").sorted()]))
            XCTAssertEqual(samples.count, 2)
            XCTAssertEqual(try samples[0].value(forKey: "text"), .string(""))
            XCTAssertEqual(try samples[0].value(forKey: "blob"), .data(Data()))
            XCTAssertEqual(try samples[1].value(forKey: "text"), .null)
            XCTAssertEqual(try samples[1].value(forKey: "blob"), .null)
        }
    }

    func testUniquingOneInstancePerIDPerContext() throws {
        let context = privateContext()
        try context.performAndWait {
            let e = try context.insert(Employee.self)
            e.name = "Grace"
            try context.save()
            let id = e.objectID
            let fetched = try context.fetch(FetchRequest<Employee>())
            XCTAssertTrue(fetched[0] === e)
            XCTAssertTrue(try context.object(with: id) === e)
            XCTAssertTrue(try context.existingObject(with: id) === e)
        }
        let other = privateContext("other")
        try other.performAndWait {
            let a = try other.fetch(FetchRequest<Employee>())[0]
            let b = try other.fetch(FetchRequest<Employee>())[0]
            XCTAssertTrue(a === b)
        }
    }

    func testFaultingLoadsOnFirstAccess() throws {
        let id = try seedEmployee("Linus")
        let reader = privateContext("reader")
        try reader.performAndWait {
            let fault = try reader.object(with: id)
            XCTAssertTrue(fault.isFault)
            XCTAssertEqual(try fault.value(forKey: "name"), .string("Linus"))
            XCTAssertFalse(fault.isFault)
            let fetched = try reader.fetch(FetchRequest<Employee>())
            XCTAssertTrue(fetched[0] === fault)
        }
        let faults = privateContext("faults")
        try faults.performAndWait {
            let fetched = try faults.fetch(FetchRequest<Employee>())
            XCTAssertTrue(fetched[0].isFault, "fetched objects are faults by default")
            XCTAssertEqual(fetched[0].name, "Linus")
            XCTAssertFalse(fetched[0].isFault)
            var request = FetchRequest<Employee>()
            request.returnsObjectsAsFaults = false
            try faults.reset()
            XCTAssertFalse(try faults.fetch(request)[0].isFault)
        }
    }
}

extension StoreTestCase {
    /// Saves one employee through its own context and returns its ID.
    func seedEmployee(_ name: String, salary: Double = 0, email: String? = nil) throws -> ManagedObjectID {
        let context = privateContext("seed")
        return try context.performAndWait {
            let e = try context.insert(Employee.self)
            e.name = name
            e.salary = salary
            e.email = email
            try context.save()
            return e.objectID
        }
    }
}
