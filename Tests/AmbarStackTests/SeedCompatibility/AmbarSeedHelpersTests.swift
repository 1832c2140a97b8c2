import AmbarStack
import Foundation
import XCTest

/// The Ambar seed's helpers on top of the stack.
final class AmbarSeedHelpersTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    let nameKey = Key<String>("name")
    let salary = Key<Double>("salary")

    /// Saves employees with the given names and salaries; returns their IDs.
    @discardableResult
    func seed(_ people: [(String, Double)]) throws -> [ManagedObjectID] {
        let context = privateContext("seed")
        return try context.performAndWait {
            var made: [Employee] = []
            for (name, salary) in people {
                let employee = try context.insert(Employee.self)
                employee.name = name
                employee.salary = salary
                made.append(employee)
            }
            try context.save()
            return made.map(\.objectID)
        }
    }

    // Row 48
    func testEntityNameIsTheClassName() {
        XCTAssertEqual(Employee.entityName, "Employee")
        XCTAssertEqual(Manager.entityName, "Manager")
    }

    // Row 49
    func testTypedFetchAndCountWithAndWithoutPendingChanges() throws {
        try seed([("Saved", 10)])
        let context = privateContext()
        try context.performAndWait {
            let pending = try context.insert(Employee.self)
            pending.name = "Pending"
            XCTAssertEqual(try Employee.count(in: context), 2, "includePending counts the unsaved insert")
            XCTAssertEqual(try Employee.count(in: context, includePending: false), 1)
            let fetched: [Employee] = try Employee.fetch(in: context, sortedWith: [nameKey.sorted()])
            XCTAssertEqual(fetched.map(\.name), ["Pending", "Saved"])
            XCTAssertEqual(try Employee.fetch(in: context, predicate: nameKey == "Saved").count, 1)
            XCTAssertThrowsError(try Employee.fetch(in: context, predicate: Key<String>("nope") == "x"), "errors throw, not []")
        }
    }

    // Row 50
    func testDistinctValues() throws {
        try seed([("A", 10), ("B", 10), ("C", 20)])
        let context = privateContext()
        try context.performAndWait {
            XCTAssertEqual(try Employee.fetchDistinctValues(of: salary, in: context), [10, 20])
            let names = try Employee.fetchDistinct(properties: ["name", "salary"], in: context, predicate: salary == 10) { row -> String? in
                guard case .string(let name) = row["name"] else { return nil }
                return name == "B" ? nil : name  // nil drops the row
            }
            XCTAssertEqual(names, ["A"])
        }
    }

    // Rows 51, 52
    func testFindLooksOnlyAtLoadedObjectsAndFindOrFetchFallsBackToTheStore() throws {
        try seed([("Ann", 1), ("Bob", 2), ("Bob", 3)])
        let context = privateContext()
        try context.performAndWait {
            XCTAssertNil(try Employee.find(in: context, predicate: nameKey == "Ann"), "in the store but not loaded: not found")
            let ann = try XCTUnwrap(try Employee.findOrFetch(in: context, predicate: nameKey == "Ann"))
            XCTAssertFalse(ann.isFault, "fetched fully")
            XCTAssertTrue(try Employee.find(in: context, predicate: nameKey == "Ann") === ann, "now loaded: found without the store")
            _ = try Employee.fetch(in: context, returnsObjectsAsFaults: false, predicate: nameKey == "Bob")
            XCTAssertNil(try Employee.find(in: context, predicate: nameKey == "Bob"), "two loaded matches: ambiguous, nil")
        }
    }

    // Row 53
    func testResultsControllerFactoryNeedsASortAndGroupsBySection() throws {
        try seed([("A", 1), ("B", 1), ("C", 2)])
        let context = privateContext()
        try context.performAndWait {
            XCTAssertThrowsError(try Employee.fetchedResultsController(in: context, sortedWith: []))
            let controller = try Employee.fetchedResultsController(
                in: context, sectionNameKeyPath: "salary", sortedWith: [salary.sorted(), nameKey.sorted()])
            try controller.performFetch()
            XCTAssertEqual(controller.sections.map { $0.objects.map(\.name) }, [["A", "B"], ["C"]])
        }
    }

    // Row 54
    func testDeleteByPredicateDoesNotSave() throws {
        try seed([("A", 1), ("B", 1), ("C", 2)])
        let context = privateContext()
        try context.performAndWait {
            XCTAssertEqual(try Employee.delete(in: context, predicate: salary == 1), 2)
            XCTAssertEqual(try Employee.count(in: context), 1)
        }
        let other = privateContext("other")
        XCTAssertEqual(try other.performAndWait { try Employee.count(in: other) }, 3, "nothing saved yet")
    }

    // Row 55
    func testLocalInstanceAcrossContextsAndCoordinators() throws {
        let ids = try seed([("Ann", 1)])
        let importer = privateContext("importer")
        let main = privateContext("main", on: try PersistentStoreCoordinator(model: model, store: try store()))
        let foreignID = try importer.performAndWait { try importer.existingObject(with: ids[0]).objectID }
        try main.performAndWait {
            let local = try main.localInstance(ofObjectWith: foreignID, as: Employee.self)
            XCTAssertEqual(local.objectID, ids[0])
            XCTAssertEqual(local.name, "Ann")
            XCTAssertTrue(try main.localInstance(of: local) === local, "same context: the same instance")
            let loose = try main.insert(Employee.self)
            XCTAssertThrowsError(try main.localInstance(ofObjectWith: loose.objectID, as: Employee.self), "a temporary ID cannot be resolved elsewhere")
            XCTAssertThrowsError(try main.localInstance(ofObjectWith: ids[0], as: Project.self), "wrong class")
        }
    }

    // Row 56
    func testUpdateMatchingValuesCopiesAttributesNotRelationships() throws {
        let context = privateContext()
        try context.performAndWait {
            let department = try context.insert(Department.self)
            department.name = "R&D"
            let source = try context.insert(Employee.self)
            source.name = "Source"
            source.salary = 99
            source.email = "s@example.com"
            source.department = department
            let target = try context.insert(Employee.self)
            target.name = "Target"
            try target.updateMatchingValues(from: source)
            XCTAssertEqual(target.name, "Source")
            XCTAssertEqual(target.salary, 99)
            XCTAssertNil(target.department, "relationships are not copied")
            XCTAssertThrowsError(try target.updateMatchingValues(from: department))
        }
    }

    // Row 57
    enum Seniority: Int16, AttributeRepresentable {
        case junior = 1
        case senior = 2
        static let fallback = Seniority.junior
    }

    func testEnumMappingFallsBackForUnknownStoredValues() throws {
        let context = privateContext()
        try context.performAndWait {
            let employee = try context.insert(Employee.self)
            try employee.setValue(Seniority.senior, forKey: "age")
            XCTAssertEqual(employee.age, 2, "stored as its raw value")
            XCTAssertEqual(Seniority(attributeValue: try employee.value(forKey: "age")), .senior)
            employee.age = 99
            XCTAssertEqual(Seniority(attributeValue: try employee.value(forKey: "age")), .junior, "unknown raw value → fallback")
            XCTAssertNil(Seniority(attributeValue: .string("x")), "not even the stored type → nil")
        }
    }

    // Row 58
    func testEntityMonitorReportsOnlyItsEntityFilteredByPredicate() throws {
        let context = privateContext()
        var reports: [(inserted: [String], updated: [String], deleted: Int)] = []
        let monitor = EntityMonitor<Employee>(context: context, predicate: salary > 5) { inserted, updated, deleted in
            reports.append((inserted.map(\.name).sorted(), updated.map(\.name).sorted(), deleted.count))
        }
        try context.performAndWait {
            let rich = try context.insert(Employee.self)
            rich.name = "Rich"
            rich.salary = 10
            let poor = try context.insert(Employee.self)
            poor.name = "Poor"
            poor.salary = 1
            let project = try context.insert(Project.self)
            project.title = "Other entity"
            try context.save()
        }
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports.last?.inserted, ["Rich"], "the predicate filters, other entities are ignored")
        try context.performAndWait {
            let rich = try XCTUnwrap(try Employee.fetch(in: context, predicate: nameKey == "Rich").first)
            rich.salary = 20
            let project = try XCTUnwrap(try Project.fetch(in: context).first)
            project.title = "Renamed"
        }
        XCTAssertEqual(reports.last?.updated, ["Rich"])
        try context.performAndWait {
            try context.delete(try XCTUnwrap(try Employee.fetch(in: context, predicate: nameKey == "Poor").first))
        }
        XCTAssertEqual(reports.last?.deleted, 1)
        let count = reports.count
        try context.performAndWait {
            let project = try XCTUnwrap(try Project.fetch(in: context).first)
            project.title = "Only a project changed"
        }
        XCTAssertEqual(reports.count, count, "no report when nothing of the entity changed")
        withExtendedLifetime(monitor) {}
    }

    // Row 59
    func testManagedSetMonitorReportsWatchedChangesAndShrinksOnDelete() throws {
        try seed([("A", 1), ("B", 2), ("C", 3)])
        let context = privateContext()
        var reports: [(updated: [String], deleted: Set<ManagedObjectID>)] = []
        let monitor: ManagedSetMonitor<Employee> = try context.performAndWait {
            let watched = Set(try Employee.fetch(in: context, predicate: nameKey != "C"))
            return try ManagedSetMonitor(objects: watched) { updated, deleted in
                reports.append((updated.map(\.name).sorted(), deleted))
            }
        }
        XCTAssertThrowsError(try ManagedSetMonitor<Employee>(objects: []) { _, _ in }, "an empty set is an error, not a crash")
        try context.performAndWait {
            let c = try XCTUnwrap(try Employee.fetch(in: context, predicate: nameKey == "C").first)
            c.salary = 30
        }
        XCTAssertTrue(reports.isEmpty, "an unwatched object changed: no report")
        var deletedID: ManagedObjectID?
        try context.performAndWait {
            let a = try XCTUnwrap(try Employee.fetch(in: context, predicate: nameKey == "A").first)
            a.salary = 10
            let b = try XCTUnwrap(try Employee.fetch(in: context, predicate: nameKey == "B").first)
            deletedID = b.objectID
            try context.delete(b)
        }
        XCTAssertEqual(reports.count, 1)
        XCTAssertEqual(reports.last?.updated, ["A"])
        XCTAssertEqual(reports.last?.deleted, [try XCTUnwrap(deletedID)])
        XCTAssertEqual(context.performAndWait { monitor.objects.map(\.name) }, ["A"], "the deleted object left the watched set")
    }
}
