import AmbarStack
import Foundation

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
        try ManagedObjectModel(
            entities: [
                EntityDescription(
                    "Department",
                    properties: [
                        .attribute("name", .string),
                        .attribute("budget", .double, defaultValue: 0.0),
                        .toMany("employees", "Employee", inverse: "department", deleteRule: .cascade),
                    ]),
                EntityDescription(
                    "Employee",
                    properties: [
                        .attribute("name", .string, indexed: true),
                        .attribute("email", .string, optional: true),
                        .attribute("salary", .double, defaultValue: 0.0),
                        .attribute("age", .integer16, defaultValue: 30),
                        .toOne("department", "Department", inverse: "employees"),
                        .toMany("projects", "Project", inverse: "members"),
                    ], uniquenessConstraints: [["email"]]),
                EntityDescription(
                    "Manager", parent: "Employee",
                    properties: [
                        .attribute("level", .integer32, defaultValue: 1)
                    ]),
                EntityDescription(
                    "Project",
                    properties: [
                        .attribute("title", .string),
                        .toMany("members", "Employee", inverse: "projects"),
                    ]),
            ], classes: [Department.self, Employee.self, Manager.self, Project.self])
    }

    /// Every attribute type, for round trips and predicate tests.
    static func allTypes() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Sample",
                properties: [
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
                ])
        ])
    }
}
