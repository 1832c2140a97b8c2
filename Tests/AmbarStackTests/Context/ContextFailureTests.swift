import AmbarStack
import Foundation
import XCTest

/// Calls that cannot throw — typed property reads and writes, faulting, results controllers
/// following changes — tell the context's failure observers (and a controller's `onError`) what
/// they could not do, not only a log line. And a private child of the main context can save into
/// it and fault through it while the main thread waits on the child.
final class ContextFailureTests: StoreTestCase {
    private func seed() throws -> ManagedObjectID {
        let writer = privateContext("seed")
        return try writer.performAndWait { () throws(AmbarError) -> ManagedObjectID in
            let employee = try writer.insert(Employee.self)
            employee.name = "Ada"
            employee.salary = 10
            try writer.save()
            return employee.objectID
        }
    }

    /// The main thread waits on a private child (performAndWait) whose block faults an object
    /// through the main context and saves into it: both parts run for the waiting main queue.
    /// Before, the child's `main.sync` waited for the main thread, which waited for the child.
    func testAPrivateChildOfMainSavesAndFaultsWhileTheMainThreadWaitsOnIt() throws {
        XCTAssertTrue(Thread.isMainThread, "XCTest runs tests on the main thread")
        let id = try seed()
        let main = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: coordinator, name: "main")
        let known = try XCTUnwrap(try main.existingObject(with: id) as? Employee)
        known.salary = 20  // an unsaved change the child must see through its parent
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: main, name: "child")
        let (childSalary, insertedID) = try child.performAndWait { () throws(AmbarError) -> (Double?, ManagedObjectID) in
            let salary = (try child.existingObject(with: id) as? Employee)?.salary
            let new = try child.insert(Employee.self)
            new.name = "Grace"
            try child.save()  // into the main context, whose queue waits for this block
            return (salary, new.objectID)
        }
        XCTAssertEqual(childSalary, 20, "the child read the object through its parent's unsaved state")
        XCTAssertEqual((main.registeredObject(for: insertedID) as? Employee)?.name, "Grace", "the save reached the main context")
        try main.save()
        XCTAssertEqual(try main.count(for: FetchRequest<Employee>(entityName: "Employee")), 2)
    }

    func testAWriteThatIsNotAppliedIsReportedToTheContextsObservers() throws {
        let id = try seed()
        let context = privateContext("editor")
        let failures = Collector<ContextFailure>()
        let observation = context.observeFailures { failures.append($0) }
        defer { observation.cancel() }
        let employee = try context.performAndWait { () throws(AmbarError) -> Employee? in try context.existingObject(with: id) as? Employee }
        employee?.name = "off its queue"  // a typed setter cannot throw: the write is refused
        XCTAssertEqual(context.performAndWait { employee?.name }, "Ada", "the write was not applied")
        let failure = try XCTUnwrap(failures.all.first, "the failed write was reported")
        XCTAssertEqual(failure.object, id)
        XCTAssertEqual(failure.property, "name")
        XCTAssertTrue(failure.operation.contains("write"), failure.operation)
        guard case .wrongQueue = failure.error else { return XCTFail("\(failure.error)") }
    }

    func testAFaultThatCannotBeReadIsReportedAndStaysAFault() throws {
        let stack = try DataStack.open(model: .model(model), storeURL: directory.file("stack.sqlite"), name: "failing")
        let coordinator = try stack.mainCoordinator
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "writer")
        let id = try writer.performAndWait { () throws(AmbarError) -> ManagedObjectID in
            let employee = try writer.insert(Employee.self)
            employee.name = "Ada"
            try writer.save()
            return employee.objectID
        }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "reader")
        let failures = Collector<ContextFailure>()
        let observation = context.observeFailures { failures.append($0) }
        defer { observation.cancel() }
        let fault = try context.performAndWait { () throws(AmbarError) -> Employee? in try context.object(with: id) as? Employee }
        try stack.deleteStore()
        let name = context.performAndWait { fault?.name }  // reads the fault: the store is gone
        XCTAssertEqual(name, "", "a fault that cannot be read reads as empty this time")
        let failure = try XCTUnwrap(failures.all.first, "the failed fault read was reported")
        XCTAssertEqual(failure.object, id)
        XCTAssertTrue(failure.operation.contains("fault"), failure.operation)
        XCTAssertTrue(context.performAndWait { fault?.isFault ?? false }, "it stays a fault, read again on next access")
    }
}

extension ContextFailureTests {
    /// A results controller whose refetch after a full refresh fails keeps its results and says
    /// so through `onError`, instead of showing an empty list.
    func testAResultsControllerWhoseRefetchFailsKeepsItsResultsAndSaysSo() throws {
        let stack = try DataStack.open(model: .model(model), storeURL: directory.file("results.sqlite"), name: "results")
        let coordinator = try stack.mainCoordinator
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "viewer")
        let errors = Collector<String>()
        let controller = try context.performAndWait { () throws(AmbarError) -> FetchedResultsController<Employee> in
            for name in ["Ada", "Grace"] {
                let employee = try context.insert(Employee.self)
                employee.name = name
            }
            try context.save()
            let controller = FetchedResultsController(fetchRequest: FetchRequest<Employee>(sortDescriptors: [Key<String>("name").sorted()]), context: context)
            controller.onError = { errors.append("\($0)") }
            try controller.performFetch()
            return controller
        }
        try stack.deleteStore()
        context.performAndWait { try? context.refreshAllObjects() }
        XCTAssertEqual(errors.all.count, 1, "the failed refetch was reported: \(errors.all)")
        XCTAssertEqual(context.performAndWait { controller.fetchedObjects.count }, 2, "the previous results are kept")
    }
}
