import AmbarStack
import Foundation
import GRDBSQLite
import XCTest

/// Fetches that differ only in their values reuse prepared statements, so a long-running process
/// does not grow with every fetch (the chaos soak found a process growing ~1.7 KB per merged
/// transaction: every results-controller update prepared and kept a statement of its own).
final class StatementReuseTests: StoreTestCase {
    /// Memory SQLite has allocated in this process, in bytes.
    private func sqliteMemoryUsed() -> Int64 {
        var current: Int64 = 0
        var highwater: Int64 = 0
        sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highwater, 0)
        return current
    }

    func testFetchesWithNewValuesDoNotGrowSQLiteMemory() throws {
        let context = privateContext()
        let ids: [ManagedObjectID] = try context.performAndWait {
            let department = try context.insert(Department.self)
            department.name = "D"
            var employees: [Employee] = []
            for n in 0..<600 {
                let employee = try context.insert(Employee.self)
                employee.name = "E\(n)"
                employee.age = Int16(n % 90)
                employee.department = department
                employees.append(employee)
            }
            try context.save()
            return employees.map(\.objectID)
        }
        XCTAssertGreaterThan(sqliteMemoryUsed(), 0, "SQLite's memory statistics are off in this build")

        var generator = SystemRandomNumberGenerator()
        let department = try context.performAndWait { try context.fetch(FetchRequest<Department>())[0].objectID }
        /// One round of fetches whose values (ID lists, IN lists, offsets, counts, targets) are new.
        func fetches(_ round: Int) throws {
            try context.performAndWait {
                var byID = FetchRequest<Employee>(predicate: .objectIn(Array(ids.shuffled(using: &generator).prefix(1 + round % 300))))
                byID.fetchOffset = round % 7
                _ = try context.fetch(byID)
                _ = try context.count(for: FetchRequest<Employee>(predicate: Key<Int16>("age").isIn((0...(round % 80)).map { Int16($0) })))
                var paged = FetchRequest<Employee>(sortDescriptors: [Key<String>("name").sorted()])
                paged.fetchLimit = 1 + round % 13
                paged.fetchOffset = round
                _ = try context.fetch(paged)
                _ = try context.fetch(FetchRequest<Department>(predicate: ToManyKey("employees").count(.greaterOrEqual, round)))
                _ = try context.fetch(FetchRequest<Employee>(predicate: ToOneKey("department") == (round.isMultiple(of: 2) ? department : ids[round])))
            }
        }

        // Warm up: every statement shape is prepared once, the pages are in the cache.
        for round in 0..<100 { try fetches(round) }
        let before = sqliteMemoryUsed()
        for round in 100..<500 { try fetches(round) }
        let growth = sqliteMemoryUsed() - before

        // Before the fix, each of these 2,000 fetches kept a statement of its own: SQLite's memory
        // grew by 15 MB. With reuse it stays put; the bound leaves room for what other threads of
        // the test process may allocate meanwhile (the measure is process-wide).
        XCTAssertLessThan(growth, 1024 * 1024, "SQLite memory grew by \(growth) bytes over 2,000 fetches with new values")
    }

    func testPaddedInListsStillMatchExactly() throws {
        let context = privateContext()
        try context.performAndWait {
            for n in 0..<40 {
                let employee = try context.insert(Employee.self)
                employee.name = "E\(n)"
                employee.age = Int16(n)
            }
            try context.save()
            // 3, 5 and 17 values are padded to 4, 8 and 32 with repeats; each row still comes once.
            for count in [1, 3, 5, 17, 40] {
                let ages = (0..<count).map { Int16($0 * 2 % 40) }
                let found = try context.fetch(FetchRequest<Employee>(predicate: Key<Int16>("age").isIn(ages)))
                XCTAssertEqual(Set(found.map(\.age)), Set(ages), "\(count) values")
                XCTAssertEqual(found.count, Set(ages).count, "\(count) values: one row per match")
            }
            let all = try context.fetch(FetchRequest<Employee>())
            let some = Array(all.prefix(7))
            let byID = try context.fetch(FetchRequest<Employee>(predicate: .objectIn(some.map(\.objectID) + some.map(\.objectID))))
            XCTAssertEqual(Set(byID.map(\.objectID)), Set(some.map(\.objectID)))
            XCTAssertEqual(byID.count, 7)
        }
    }

    func testPaddedDecimalListsStillMatchExactly() throws {
        let coordinator = try PersistentStoreCoordinator(model: try TestModel.allTypes(), store: .sqlite(directory.file("types.sqlite")))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            for n in 1...6 {
                let sample = try context.insertObject(entityName: "Sample")
                try sample.setValue(.decimal(Decimal(n) / 10), forKey: "amount")
            }
            try context.save()
            // Three values (decimals compare as an OR chain) are padded to four.
            let wanted = [Decimal(1) / 10, Decimal(3) / 10, Decimal(5) / 10]
            let found = try context.fetch(FetchRequest<ManagedObject>(entityName: "Sample", predicate: Key<Decimal>("amount").isIn(wanted)))
            XCTAssertEqual(found.count, 3)
            XCTAssertEqual(Set(try found.map { try $0.value(forKey: "amount") }), Set(wanted.map { AttributeValue.decimal($0) }))
        }
    }
}
