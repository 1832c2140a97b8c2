import AmbarStack
import Foundation
import XCTest

final class RelationshipTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    func testSettingToOneMaintainsInverseAndPersists() throws {
        let context = privateContext()
        let (deptID, empID): (ManagedObjectID, ManagedObjectID) = try context.performAndWait {
            let dept = try context.insert(Department.self)
            dept.name = "R&D"
            let ada = try context.insert(Employee.self)
            ada.name = "Ada"
            ada.department = dept
            XCTAssertEqual(dept.employees, [ada], "inverse maintained in memory")
            try context.save()
            return (dept.objectID, ada.objectID)
        }
        let reader = privateContext("reader")
        try reader.performAndWait {
            let dept = try XCTUnwrap(try reader.existingObject(with: deptID) as? Department)
            XCTAssertEqual(dept.employees.map(\.objectID), [empID])
            let ada = try XCTUnwrap(dept.employees.first)
            XCTAssertTrue(ada.department === dept)
            // Moving an employee between departments updates both old and new sides.
            let other = try reader.insert(Department.self)
            other.name = "Ops"
            ada.department = other
            XCTAssertTrue(dept.employees.isEmpty)
            XCTAssertEqual(other.employees, [ada])
            try reader.save()
        }
        let third = privateContext("third")
        try third.performAndWait {
            let dept = try XCTUnwrap(try third.existingObject(with: deptID) as? Department)
            XCTAssertTrue(dept.employees.isEmpty)
        }
    }

    func testAddingToToManySetsInverseToOne() throws {
        let context = privateContext()
        try context.performAndWait {
            let dept = try context.insert(Department.self)
            dept.name = "R&D"
            let grace = try context.insert(Employee.self)
            grace.name = "Grace"
            try dept.addObject(grace, toKey: "employees")
            XCTAssertTrue(grace.department === dept)
            try dept.removeObject(grace, fromKey: "employees")
            XCTAssertNil(grace.department)
            dept.employees = [grace]
            XCTAssertTrue(grace.department === dept)
            try context.save()
        }
    }

    func testManyToManyPersistsBothSides() throws {
        let context = privateContext()
        let projectID: ManagedObjectID = try context.performAndWait {
            let p = try context.insert(Project.self)
            p.title = "Apollo"
            let a = try context.insert(Employee.self)
            a.name = "A"
            let b = try context.insert(Employee.self)
            b.name = "B"
            p.members = [a, b]
            XCTAssertEqual(a.projects, [p])
            try context.save()
            return p.objectID
        }
        let reader = privateContext("reader")
        try reader.performAndWait {
            let p = try XCTUnwrap(try reader.existingObject(with: projectID) as? Project)
            XCTAssertEqual(Set(p.members.map(\.name)), ["A", "B"])
            let a = try XCTUnwrap(p.members.first { $0.name == "A" })
            a.projects = []
            XCTAssertEqual(p.members.map(\.name), ["B"])
            try reader.save()
        }
        let third = privateContext("third")
        try third.performAndWait {
            let p = try XCTUnwrap(try third.existingObject(with: projectID) as? Project)
            XCTAssertEqual(p.members.map(\.name), ["B"])
        }
    }

    func testCascadeDeleteRemovesDestinations() throws {
        let context = privateContext()
        try context.performAndWait {
            let dept = try context.insert(Department.self)
            dept.name = "Temp"
            for i in 0..<3 {
                let e = try context.insert(Employee.self)
                e.name = "e\(i)"
                e.department = dept
            }
            try context.save()
            try context.delete(dept)
            XCTAssertEqual(context.deletedObjects.count, 4, "the department and its 3 employees")
            try context.save()
            XCTAssertEqual(try context.count(for: FetchRequest<Employee>()), 0)
        }
    }

    func testNullifyClearsInverse() throws {
        let context = privateContext()
        try context.performAndWait {
            let dept = try context.insert(Department.self)
            dept.name = "R&D"
            let e = try context.insert(Employee.self)
            e.name = "Ada"
            e.department = dept
            try context.save()
            try context.delete(e)  // Employee.department is nullify
            XCTAssertTrue(dept.employees.isEmpty)
            try context.save()
        }
        let reader = privateContext("reader")
        try reader.performAndWait {
            let dept = try reader.fetch(FetchRequest<Department>())[0]
            XCTAssertTrue(dept.employees.isEmpty)
        }
    }

    func testDenyRuleRefusesSaveAndWritesNothing() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Owner",
                properties: [
                    .attribute("name", .string),
                    .toMany("pets", "Pet", inverse: "owner", deleteRule: .deny),
                ]),
            EntityDescription(
                "Pet",
                properties: [
                    .attribute("name", .string),
                    .toOne("owner", "Owner", inverse: "pets"),
                ]),
        ])
        let coordinator = try PersistentStoreCoordinator(model: model, store: try store("deny.sqlite"))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let owner = try context.insertObject(entityName: "Owner")
            try owner.setValue("Ann", forKey: "name")
            let pet = try context.insertObject(entityName: "Pet")
            try pet.setValue("Rex", forKey: "name")
            try pet.setObject(owner, forKey: "owner")
            try context.save()
            try context.delete(owner)
            assertThrows({ try context.save() }) {
                if case .deleteDenied(_, let rel) = $0 { return rel == "pets" }
                return false
            }
            XCTAssertTrue(owner.isDeleted, "the context keeps its changes")
            try context.rollback()
            XCTAssertFalse(owner.isDeleted)
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Owner")), 1)
        }
    }

    func testInheritanceFetchesIncludeSubentities() throws {
        let context = privateContext()
        try context.performAndWait {
            let e = try context.insert(Employee.self)
            e.name = "Worker"
            let m = try context.insert(Manager.self)
            m.name = "Boss"
            m.level = 3
            try context.save()
        }
        let reader = privateContext("reader")
        try reader.performAndWait {
            let all = try reader.fetch(FetchRequest<Employee>(sortDescriptors: [Key<String>("name").sorted()]))
            XCTAssertEqual(all.map(\.name), ["Boss", "Worker"])
            XCTAssertTrue(all[0] is Manager)
            XCTAssertEqual((all[0] as? Manager)?.level, 3)
            XCTAssertEqual(all[0].objectID.entityName, "Manager")
            var onlyEmployees = FetchRequest<Employee>()
            onlyEmployees.includesSubentities = false
            XCTAssertEqual(try reader.fetch(onlyEmployees).map(\.name), ["Worker"])
            XCTAssertEqual(try reader.fetch(FetchRequest<Manager>()).map(\.name), ["Boss"])
        }
    }

    func testSettingWrongDestinationTypeThrows() throws {
        let context = privateContext()
        try context.performAndWait {
            let e = try context.insert(Employee.self)
            let p = try context.insert(Project.self)
            assertThrows({ try e.setObject(p, forKey: "department") }) {
                if case .typeMismatch = $0 { return true }
                return false
            }
            assertThrows({ try e.setObject(p, forKey: "nope") }) {
                if case .unknownProperty(_, "nope") = $0 { return true }
                return false
            }
        }
    }
}
