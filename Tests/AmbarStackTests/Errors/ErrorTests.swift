import AmbarStack
import Foundation
import XCTest

final class ErrorTests: StoreTestCase {
    func testInvalidModelsAreRefusedWithTheirReason() {
        func check(_ entities: [EntityDescription], contains text: String, line: UInt = #line) {
            do {
                _ = try ManagedObjectModel(entities: entities)
                XCTFail("expected invalid model", line: line)
            } catch {
                guard case .invalidModel(let reason) = error else { return XCTFail("\(error)", line: line) }
                XCTAssertTrue(reason.contains(text), reason, line: line)
            }
        }
        check([EntityDescription("A"), EntityDescription("A")], contains: "defined twice")
        check([EntityDescription("A", parent: "Nope", properties: [])], contains: "not in the model")
        check([EntityDescription("A", properties: [.toOne("b", "B")])], contains: "'B'")
        check([EntityDescription("A", properties: [.attribute("x", .string), .attribute("x", .double)])], contains: "'x'")
        check([EntityDescription("A", properties: [.attribute("Z_PK", .string)])], contains: "reserved")
        check([EntityDescription("A", properties: [.attribute("n", .integer16, defaultValue: "text")])], contains: "default value")
        check([EntityDescription("A", properties: [.attribute("n", .string)], uniquenessConstraints: [["m"]])], contains: "'m'")
        check(
            [EntityDescription("A", properties: [.toOne("b", "B", inverse: "a")]), EntityDescription("B", properties: [.toOne("a", "A", inverse: "other")])],
            contains: "name each other")
        check([EntityDescription("bad name")], contains: "entity name")
    }

    /// A failed statement's message holds for reads as for saves: it said "the context keeps its
    /// changes" to a reader, which had none.
    func testAFailedStatementSaysWhatItMeansForASaveAndForARead() {
        let text = AmbarError.storage(operation: "fetch of Employee", code: 11, message: "database disk image is malformed").description
        XCTAssertTrue(text.contains("fetch of Employee (code 11): database disk image is malformed"), text)
        XCTAssertTrue(text.contains("a context that was saving keeps its unsaved changes"), text)
        XCTAssertTrue(text.contains("a read can be retried"), text)
    }

    func testModelIsCodableWithStableHash() throws {
        let data = try JSONEncoder().encode(model)
        let decoded = try JSONDecoder().decode(ManagedObjectModel.self, from: data)
        XCTAssertEqual(decoded, model)
        XCTAssertEqual(decoded.versionHash, model.versionHash)
        let changed = try ManagedObjectModel(entities: model.entities + [EntityDescription("Extra", properties: [.attribute("x", .string)])])
        XCTAssertNotEqual(changed.versionHash, model.versionHash)
        XCTAssertEqual(try PersistentStoreCoordinator.storedModel(at: directory.file()).versionHash, model.versionHash)
    }

    func testIncompatibleModelAndBadFilesAreTypedErrors() throws {
        let other = try ManagedObjectModel(entities: [EntityDescription("Other", properties: [.attribute("x", .string)])])
        // A model that is not a lightweight step from the store's: refused, every reason named.
        assertThrows({ try PersistentStoreCoordinator(model: other, store: .sqlite(directory.file())) }) {
            if case .migrationRefused(let reasons) = $0 { return reasons.contains("entity Employee was removed") && reasons.count == 4 }
            return false
        }
        XCTAssertEqual(try PersistentStoreCoordinator.storedModel(at: directory.file()).versionHash, model.versionHash, "the store is untouched")
        let garbage = directory.file("garbage.sqlite")
        try Data(repeating: 0x41, count: 8192).write(to: garbage)
        assertThrows({ try PersistentStoreCoordinator(model: model, store: .sqlite(garbage)) }) {
            if case .storeDamaged(let path, let reason) = $0 { return path == garbage.path && reason.contains("not an SQLite database") }
            return false
        }
        XCTAssertEqual(try Data(contentsOf: garbage), Data(repeating: 0x41, count: 8192), "a bad file is never touched")
        assertThrows({ try PersistentStoreCoordinator(model: model, store: .sqlite(URL(fileURLWithPath: "/proc/nope/store.sqlite"))) }) {
            if case .storeCannotOpen = $0 { return true }
            return false
        }
        assertThrows({ try PersistentStoreCoordinator.storedModel(at: directory.file("missing.sqlite")) }) {
            if case .storeCannotOpen(_, "no such file", _) = $0 { return true }
            return false
        }
        // A directory given as the store: named as such, with the file to give instead.
        let folder = directory.file("shared")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for open in [
            { _ = try PersistentStoreCoordinator(model: self.model, store: .sqlite(folder)) },
            { _ = try PersistentStoreCoordinator.storedModel(at: folder) },
        ] as [() throws -> Void] {
            assertThrows(open) {
                if case .storeCannotOpen(let path, let reason, _) = $0 {
                    return path == folder.path && reason.contains("it is a directory") && reason.contains("\(folder.path)/ambar.sqlite")
                }
                return false
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [], "nothing was made in it")
    }

    func testObjectIDURIsParseBackAndBadOnesThrow() throws {
        let id = try seedEmployee("A")
        XCTAssertTrue(id.uriString.hasPrefix("ambar://\(coordinator.storeIdentifier)/Employee/p"))
        XCTAssertEqual(try ManagedObjectID(uriString: id.uriString), id)
        XCTAssertEqual(try coordinator.managedObjectID(forURIRepresentation: id.uriRepresentation), id)
        for bad in [
            "", "http://x/y/p1", "ambar://not-a-uuid/Employee/p1", "ambar://\(coordinator.storeIdentifier)/Employee/x1",
            "ambar://\(coordinator.storeIdentifier)/Employee/p0", "ambar://\(coordinator.storeIdentifier)/p1",
        ] {
            assertThrows({ try ManagedObjectID(uriString: bad) }) {
                if case .invalidObjectID = $0 { return true }
                return false
            }
        }
        let foreign = try ManagedObjectID(uriString: "ambar://\(UUID().uuidString)/Employee/p1")
        assertThrows({ try self.coordinator.managedObjectID(forURIRepresentation: foreign.uriRepresentation) }) {
            if case .invalidObjectID(let reason) = $0 { return reason.contains("belongs to store") }
            return false
        }
        let unknown = try ManagedObjectID(uriString: "ambar://\(coordinator.storeIdentifier)/Nope/p1")
        let context = privateContext()
        try context.performAndWait {
            assertThrows({ try context.object(with: unknown) }) {
                if case .invalidObjectID = $0 { return true }
                return false
            }
            let missing = try ManagedObjectID(uriString: "ambar://\(coordinator.storeIdentifier)/Employee/p999")
            assertThrows({ try context.existingObject(with: missing) }) {
                if case .objectNotFound(missing) = $0 { return true }
                return false
            }
        }
    }

    /// A class whose entity the model maps to another class is refused before anything is
    /// inserted, every time, also after inserts of the entity's own class (whose layout the
    /// context keeps for the next insert).
    func testInsertingAClassMappedToAnotherClassInsertsNothing() throws {
        let context = privateContext("typed")
        try context.performAndWait {
            for round in 0..<2 {
                assertThrows({ try context.insert(ImpostorEmployee.self) }) {
                    guard case .invalidModel(let reason) = $0 else { return false }
                    return reason.contains("mapped to Employee, not ImpostorEmployee")
                }
                XCTAssertEqual(context.insertedObjects.count, round, "a refused insert left an object behind")
                let employee = try context.insert(Employee.self)
                XCTAssertTrue(type(of: employee) == Employee.self)
            }
            let manager = try context.insert(Manager.self)
            XCTAssertEqual(manager.entityName, "Manager")
            XCTAssertEqual(context.insertedObjects.count, 3)
        }
    }

    func testCallsOffTheContextQueueThrow() throws {
        let context = privateContext("confined")
        assertThrows({ try context.insert(Employee.self) }) {
            if case .wrongQueue(let name, let operation) = $0 { return name == "confined" && operation == "insert" }
            return false
        }
        assertThrows({ try context.fetch(FetchRequest<Employee>()) }) {
            if case .wrongQueue = $0 { return true }
            return false
        }
        assertThrows({ try context.save() }) {
            if case .wrongQueue = $0 { return true }
            return false
        }
        // An object's setter off its queue refuses and reports it.
        let employee = try context.performAndWait { try context.insert(Employee.self) }
        assertThrows({ try employee.setValue(.string("x"), forKey: "name") }) {
            if case .wrongQueue = $0 { return true }
            return false
        }
    }

    func testValidationTypeAndUnknownPropertyErrors() throws {
        let context = privateContext()
        try context.performAndWait {
            let e = try context.insert(Employee.self)
            assertThrows({ try context.save() }) {
                if case .validation(let object, "name", _) = $0 { return object == e.objectID }
                return false
            }
            assertThrows({ try e.setValue(.string("old"), forKey: "age") }) {
                if case .typeMismatch(_, "age", .integer16, "string") = $0 { return true }
                return false
            }
            assertThrows({ try e.setValue(.integer(100_000), forKey: "age") }) {
                if case .typeMismatch = $0 { return true }
                return false
            }
            assertThrows({ try e.value(forKey: "nope") }) {
                if case .unknownProperty("Employee", "nope") = $0 { return true }
                return false
            }
            assertThrows({ try context.insertObject(entityName: "Nope") }) {
                if case .unknownEntity("Nope") = $0 { return true }
                return false
            }
            assertThrows({ try context.fetch(FetchRequest<Employee>(predicate: Key<Double>("name") > 3)) }) {
                if case .invalidPredicate = $0 { return true }
                return false
            }
            assertThrows({ try context.fetch(FetchRequest<Employee>(predicate: Key<String>("nope") == "x")) }) {
                if case .unknownProperty = $0 { return true }
                return false
            }
            assertThrows({ try context.fetch(FetchRequest<Employee>(predicate: Key<String>("salary").contains("x"))) }) {
                if case .invalidPredicate = $0 { return true }
                return false
            }
            assertThrows({ try context.fetchValues(FetchRequest<Employee>(), properties: []) }) {
                if case .invalidFetchRequest = $0 { return true }
                return false
            }
            assertThrows({ try context.insert(Project.self).setObject(e, forKey: "members") }) {
                if case .invalidPredicate = $0 { return true }
                return false
            }
        }
        XCTAssertTrue(AmbarError.storeDeleted.description.contains("Create a new stack"))
    }

    func testForeignObjectsAreRefused() throws {
        let a = privateContext("a")
        let b = privateContext("b")
        let employee = try a.performAndWait { try a.insert(Employee.self) }
        try b.performAndWait {
            let dept = try b.insert(Department.self)
            assertThrows({ try dept.addObject(employee, toKey: "employees") }) {
                if case .foreignObject = $0 { return true }
                return false
            }
            assertThrows({ try b.delete(employee) }) {
                if case .foreignObject = $0 { return true }
                return false
            }
        }
    }
}

/// A class that names the test model's `Employee` entity, which the model maps to `Employee`.
private final class ImpostorEmployee: ManagedObject {
    override class var entityName: String { "Employee" }
}
