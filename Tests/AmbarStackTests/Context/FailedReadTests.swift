import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A read that fails (the database server out of reach) fails the operation that needed it: a
/// to-many relationship that could not be read is not kept as an empty set, so delete rules,
/// count limits and changes to it never act on nothing once the server is back; a fault that
/// could not be filled refuses writes.
final class FailedReadTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private func requirePostgreSQL() throws -> PostgresTestServer {
        guard backend == .postgres else { throw XCTSkip("needs a store whose server can be stopped and started again (the PostgreSQL pass runs it)") }
        return try PostgresTestServer.shared()
    }

    /// A department with `count` employees, saved; returns its ID.
    private func seedDepartment(employees count: Int) throws -> ManagedObjectID {
        let writer = privateContext("seed")
        return try writer.performAndWait { () throws -> ManagedObjectID in
            let department = try writer.insert(Department.self)
            department.name = "Research"
            for i in 0..<count {
                let employee = try writer.insert(Employee.self)
                employee.name = "E\(i)"
                employee.department = department
            }
            try writer.save()
            return department.objectID
        }
    }

    private func employeeCount() throws -> Int {
        let reader = privateContext("count")
        return try reader.performAndWait { () throws in try reader.count(for: FetchRequest<Employee>(entityName: "Employee")) }
    }

    /// The defect: the employees read during the outage were kept as "none", so deleting the
    /// department after the server came back cascaded to nothing and the save left them.
    func testAToManyReadDuringAnOutageIsNotKeptAndDeletingCascadesOnceTheServerIsBack() throws {
        let server = try requirePostgreSQL()
        let id = try seedDepartment(employees: 3)
        let context = privateContext("editor")
        let failures = Collector<ContextFailure>()
        let observation = context.observeFailures { failures.append($0) }
        defer { observation.cancel() }
        let department = try context.performAndWait { () throws -> Department in
            let department = try XCTUnwrap(try context.existingObject(with: id) as? Department)
            XCTAssertEqual(department.name, "Research")
            return department
        }

        try server.crash()
        var restarted = false
        defer { if !restarted { try? server.restart() } }
        let seenDuringOutage = context.performAndWait { department.employees.count }
        XCTAssertEqual(seenDuringOutage, 0, "a typed getter cannot throw: it shows what it could read")
        XCTAssertTrue(failures.all.contains { $0.property == "employees" }, "the failed read was reported: \(failures.all)")
        try context.performAndWait {
            XCTAssertThrowsError(try context.delete(department), "deleting needs the employees, which cannot be read") { error in
                guard case .serverUnavailable = error as? AmbarError else { return XCTFail("\(error)") }
            }
            XCTAssertFalse(department.isDeleted, "nothing was deleted")
            XCTAssertFalse(context.hasChanges)
        }
        try server.restart()
        restarted = true

        try context.performAndWait { () throws in
            XCTAssertEqual(department.employees.count, 3, "the relationship is read again, not remembered as empty")
            try context.delete(department)
            try context.save()
        }
        XCTAssertEqual(try employeeCount(), 0, "the cascade reached every employee")
    }

    /// A save whose checks need a to-many relationship (a count limit) fails while it cannot be
    /// read, and succeeds with the right count afterwards.
    func testASaveThatNeedsAnUnreadableRelationshipFailsAndWritesNothing() throws {
        let server = try requirePostgreSQL()
        let id = try seedDepartment(employees: 2)
        let context = privateContext("editor")
        let department = try context.performAndWait { () throws -> Department in
            try XCTUnwrap(try context.existingObject(with: id) as? Department)
        }
        try server.crash()
        var restarted = false
        defer { if !restarted { try? server.restart() } }
        try context.performAndWait {
            XCTAssertThrowsError(try department.addObject(try context.insert(Employee.self), toKey: "employees"), "adding needs the current set") { error in
                guard case .serverUnavailable = error as? AmbarError else { return XCTFail("\(error)") }
            }
        }
        try server.restart()
        restarted = true
        try context.performAndWait { () throws in
            try context.rollback()
            let added = try context.insert(Employee.self)
            added.name = "New"
            try department.addObject(added, toKey: "employees")
            XCTAssertEqual(department.employees.count, 3)
            try context.save()
        }
        XCTAssertEqual(try employeeCount(), 3)
    }

    /// A fault that could not be filled refuses a write: saving it would have written an object
    /// whose other values were never read.
    func testAWriteToAFaultThatCannotBeReadIsRefused() throws {
        let server = try requirePostgreSQL()
        let id = try seedDepartment(employees: 0)
        let context = privateContext("editor")
        let fault = try context.performAndWait { () throws -> ManagedObject in try context.object(with: id) }
        try server.crash()
        var restarted = false
        defer { if !restarted { try? server.restart() } }
        try context.performAndWait {
            XCTAssertThrowsError(try fault.setValue(.double(5), forKey: "budget")) { error in
                guard case .serverUnavailable = error as? AmbarError else { return XCTFail("\(error)") }
            }
            XCTAssertFalse(context.hasChanges, "the write was not applied")
        }
        try server.restart()
        restarted = true
        try context.performAndWait { () throws in
            try fault.setValue(.double(5), forKey: "budget")
            try context.save()
        }
        let reader = privateContext("reader")
        let saved = try reader.performAndWait { () throws -> (String, Double) in
            let department = try XCTUnwrap(try reader.existingObject(with: id) as? Department)
            return (department.name, department.budget)
        }
        XCTAssertEqual(saved.0, "Research", "the values that were never changed are intact")
        XCTAssertEqual(saved.1, 5)
    }

    /// A results controller whose predicate needs an object it cannot read keeps the row where
    /// it was and tells `onError`, instead of counting "cannot know" as "no match".
    func testAResultsControllerKeepsARowItCannotEvaluateAndReportsWhy() throws {
        let server = try requirePostgreSQL()
        _ = try seedDepartment(employees: 2)
        let context = privateContext("viewer")
        let errors = Collector<String>()
        let changes = Collector<[ResultsChange]>()
        let controller = try context.performAndWait { () throws -> FetchedResultsController<Employee> in
            let request = FetchRequest<Employee>(predicate: Key<String>("department.name") == "Research", sortDescriptors: [Key<String>("name").sorted()])
            let controller = FetchedResultsController(fetchRequest: request, context: context)
            controller.onError = { errors.append("\($0)") }
            controller.onChange = { changes.append($0) }
            try controller.performFetch()
            return controller
        }
        XCTAssertEqual(context.performAndWait { controller.fetchedObjects.map(\.name) }, ["E0", "E1"])

        try server.crash()
        var restarted = false
        defer { if !restarted { try? server.restart() } }
        context.performAndWait {
            // The department is a fault: the predicate cannot be evaluated on the changed row.
            controller.fetchedObjects[0].salary = 99
            context.processPendingChanges()
        }
        XCTAssertFalse(errors.all.isEmpty, "the controller said it could not evaluate the predicate")
        XCTAssertEqual(context.performAndWait { controller.fetchedObjects.map(\.name) }, ["E0", "E1"], "the row kept its place")
        XCTAssertFalse(changes.all.joined().contains { if case .delete = $0 { return true } else { return false } }, "no row was reported removed")
        try server.restart()
        restarted = true
        context.performAndWait {
            controller.fetchedObjects[1].salary = 7
            context.processPendingChanges()
        }
        XCTAssertEqual(context.performAndWait { controller.fetchedObjects.map(\.name) }, ["E0", "E1"])
    }

    /// An entity monitor whose predicate cannot be evaluated on a changed object tells `onError`
    /// and the context's failure observers, instead of logging "matches nothing".
    func testAnEntityMonitorReportsAChangeItCannotCheck() throws {
        let server = try requirePostgreSQL()
        _ = try seedDepartment(employees: 1)
        let context = privateContext("monitored")
        let errors = Collector<AmbarError>()
        let reported = Collector<Int>()
        let failures = Collector<ContextFailure>()
        let observation = context.observeFailures { failures.append($0) }
        defer { observation.cancel() }
        let (monitor, employee) = try context.performAndWait { () throws -> (EntityMonitor<Employee>, Employee) in
            let employee = try XCTUnwrap(try context.fetch(FetchRequest<Employee>(entityName: "Employee")).first)
            let monitor = EntityMonitor<Employee>(context: context, predicate: Key<String>("department.name") == "Research") { inserted, updated, _ in
                reported.append(inserted.count + updated.count)
            }
            monitor.onError = { errors.append($0) }
            return (monitor, employee)
        }
        try server.crash()
        var restarted = false
        defer { if !restarted { try? server.restart() } }
        context.performAndWait {
            employee.salary = 99
            context.processPendingChanges()
        }
        guard case .serverUnavailable = errors.all.first else { return XCTFail("onError was told why: \(errors.all)") }
        XCTAssertTrue(failures.all.contains { $0.object == employee.objectID }, "the context's observers were told: \(failures.all)")
        try server.restart()
        restarted = true
        context.performAndWait {
            employee.salary = 100
            context.processPendingChanges()
        }
        XCTAssertEqual(reported.all.last, 1, "once it can be read, the change is reported")
        withExtendedLifetime(monitor) {}
    }

    /// One employee per `(department, employee)` name pair, each in a department of its own, saved.
    private func seedEmployees(_ pairs: [(department: String, employee: String)]) throws {
        let writer = privateContext("seed")
        try writer.performAndWait { () throws in
            for (departmentName, employeeName) in pairs {
                let department = try writer.insert(Department.self)
                department.name = departmentName
                let employee = try writer.insert(Employee.self)
                employee.name = employeeName
                employee.department = department
            }
            try writer.save()
        }
    }

    /// A results controller over every employee, sorted by department name then name, its
    /// errors collected in `errors`, fetched (on `context`'s queue).
    private func sortedByDepartment(in context: ManagedObjectContext, errors: Collector<AmbarError>) throws -> FetchedResultsController<Employee> {
        let request = FetchRequest<Employee>(sortDescriptors: [Key<String>("department.name").sorted(), Key<String>("name").sorted()])
        let controller = FetchedResultsController(fetchRequest: request, context: context)
        controller.onError = { errors.append($0) }
        try controller.performFetch()
        return controller
    }

    /// A changed row whose sort value cannot be read (its department is a fault the server
    /// cannot fill) keeps its place in a results controller, and the failure is reported;
    /// before, the value read as null and the row jumped to the top. Once the server answers,
    /// the row is placed by its value.
    func testAResultsRowWhoseSortValueCannotBeReadKeepsItsPlace() throws {
        let server = try requirePostgreSQL()
        try seedEmployees([("A", "Ann"), ("B", "Bob")])
        let context = privateContext("viewer")
        let errors = Collector<AmbarError>()
        let (controller, bob) = try context.performAndWait { () throws -> (FetchedResultsController<Employee>, Employee) in
            let controller = try sortedByDepartment(in: context, errors: errors)
            XCTAssertEqual(controller.fetchedObjects.map(\.name), ["Ann", "Bob"])
            return (controller, try XCTUnwrap(controller.fetchedObjects.last))
        }

        try server.crash()
        var restarted = false
        defer { if !restarted { try? server.restart() } }
        context.performAndWait {
            bob.salary = 99
            context.processPendingChanges()
        }
        guard case .serverUnavailable = errors.all.first else { return XCTFail("onError was told why: \(errors.all)") }
        XCTAssertEqual(context.performAndWait { controller.fetchedObjects.map(\.name) }, ["Ann", "Bob"], "Bob kept his place")
        try server.restart()
        restarted = true

        context.performAndWait {
            bob.salary = 100
            context.processPendingChanges()
        }
        XCTAssertEqual(context.performAndWait { controller.fetchedObjects.map(\.name) }, ["Ann", "Bob"], "placed by his department once it can be read")
    }

    /// A changed row is placed by binary search among the rows shown; when one of those cannot
    /// be read to compare with (its department is a fault the server cannot fill), the failure
    /// is reported and the results are fetched again once the server answers; before, that row's
    /// value read as null and the changed row was placed after it, out of order, silently.
    func testAShownRowThatCannotBeReadToCompareWithIsReportedAndTheResultsFetchedAgain() throws {
        let server = try requirePostgreSQL()
        try seedEmployees([("B", "Ann"), ("A", "Bob")])
        let context = privateContext("viewer")
        let errors = Collector<AmbarError>()
        let (controller, bob) = try context.performAndWait { () throws -> (FetchedResultsController<Employee>, Employee) in
            let controller = try sortedByDepartment(in: context, errors: errors)
            XCTAssertEqual(controller.fetchedObjects.map(\.name), ["Bob", "Ann"])
            let bob = try XCTUnwrap(controller.fetchedObjects.first)
            XCTAssertEqual(bob.department?.name, "A", "Bob's department is loaded; Ann's stays a fault")
            return (controller, bob)
        }

        try server.crash()
        var restarted = false
        defer { if !restarted { try? server.restart() } }
        context.performAndWait {
            bob.name = "Bobby"
            context.processPendingChanges()
        }
        XCTAssertFalse(errors.all.isEmpty, "the row that could not be compared with was reported")
        guard case .serverUnavailable = errors.all.first else { return XCTFail("onError was told why: \(errors.all)") }
        try server.restart()
        restarted = true

        var names: [String] = []
        let fetchedAgain = eventually(timeout: 30, every: 0.05) {
            names = context.performAndWait { controller.fetchedObjects.map(\.name) }
            return names == ["Bobby", "Ann"] && errors.all.count >= 1
        }
        XCTAssertTrue(fetchedAgain, "the results were fetched again in order: \(names)")
    }
}
