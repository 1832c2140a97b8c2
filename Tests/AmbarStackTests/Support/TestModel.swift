import AmbarStack
import Foundation
import XCTest

final class Department: ManagedObject {
    @Managed("name") var name: String
    @Managed("budget") var budget: Double
    @ToMany("employees") var employees: Set<Employee>
}

class Employee: ManagedObject {
    @Managed("name") var name: String
    @Managed("email") var email: String?
    @Managed("salary") var salary: Double
    @Managed("age") var age: Int16
    @ToOne("department") var department: Department?
    @ToMany("projects") var projects: Set<Project>
}

final class Manager: Employee {
    @Managed("level") var level: Int32
}

final class Project: ManagedObject {
    @Managed("title") var title: String
    @ToMany("members") var members: Set<Employee>
}

enum TestModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription("Department", properties: [
                .attribute("name", .string),
                .attribute("budget", .double, defaultValue: 0.0),
                .toMany("employees", "Employee", inverse: "department", deleteRule: .cascade),
            ]),
            EntityDescription("Employee", properties: [
                .attribute("name", .string, indexed: true),
                .attribute("email", .string, optional: true),
                .attribute("salary", .double, defaultValue: 0.0),
                .attribute("age", .integer16, defaultValue: 30),
                .toOne("department", "Department", inverse: "employees"),
                .toMany("projects", "Project", inverse: "members"),
            ], uniquenessConstraints: [["email"]]),
            EntityDescription("Manager", parent: "Employee", properties: [
                .attribute("level", .integer32, defaultValue: 1),
            ]),
            EntityDescription("Project", properties: [
                .attribute("title", .string),
                .toMany("members", "Employee", inverse: "projects"),
            ]),
        ], classes: [Department.self, Employee.self, Manager.self, Project.self])
    }

    /// Every attribute type, for round trips and predicate tests.
    static func allTypes() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription("Sample", properties: [
                .attribute("text", .string, optional: true),
                .attribute("i16", .integer16, optional: true),
                .attribute("i32", .integer32, optional: true),
                .attribute("i64", .integer64, optional: true),
                .attribute("dbl", .double, optional: true),
                .attribute("flt", .float, optional: true),
                .attribute("flag", .boolean, optional: true),
                .attribute("when", .date, optional: true),
                .attribute("blob", .binary, optional: true),
                .attribute("uid", .uuid, optional: true),
                .attribute("link", .uri, optional: true),
                .attribute("amount", .decimal, optional: true),
            ]),
        ])
    }
}

/// A temporary directory removed when the test ends, pass or fail.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("ambar-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String = "store.sqlite") -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}

class StoreTestCase: XCTestCase {
    var directory: TemporaryDirectory!
    var model: ManagedObjectModel!
    var coordinator: PersistentStoreCoordinator!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        model = try TestModel.make()
        coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file()))
    }

    override func tearDown() {
        coordinator = nil
        directory = nil
    }

    func privateContext(_ name: String = "test", on coordinator: PersistentStoreCoordinator? = nil) -> ManagedObjectContext {
        ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator ?? self.coordinator, name: name)
    }

    /// Asserts that `body` throws an ``AmbarError`` matching `check`.
    func assertThrows<T>(_ body: () throws -> T, _ check: (AmbarError) -> Bool, file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try body()
            XCTFail("expected an error", file: file, line: line)
        } catch let error as AmbarError {
            XCTAssertTrue(check(error), "unexpected error: \(error)", file: file, line: line)
        } catch {
            XCTFail("not an AmbarError: \(error)", file: file, line: line)
        }
    }
}
