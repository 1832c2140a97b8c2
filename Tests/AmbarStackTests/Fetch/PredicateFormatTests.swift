import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `NSPredicate` format strings: every documented spelling parses to the predicate the typed keys
/// build; errors quote the format and point at the position; parsed predicates give the same
/// results in SQL and in memory as the predicates they were rendered from.
final class PredicateFormatTests: XCTestCase {
    private func parse(_ format: String, _ arguments: Any?...) throws -> ObjectPredicate {
        try ObjectPredicate(format: format, argumentArray: arguments)
    }

    func testEverySpellingParsesToTheBuilderPredicate() throws {
        let name = Key<String>("name")
        let salary = Key<Double>("salary")
        let cases: [(String, [Any?], ObjectPredicate)] = [
            ("name == 'Ann'", [], name == "Ann"),
            ("name = \"Ann\"", [], name == "Ann"),
            ("name != %@", ["Ann"], name != "Ann"),
            ("name <> 'Ann'", [], name != "Ann"),
            ("salary < 10", [], .comparison(key: "salary", op: .less, value: .integer(10), options: [])),
            ("salary <= 1.5", [], salary <= 1.5),
            ("salary =< 1.5", [], salary <= 1.5),
            ("salary > %f", [2.5], salary > 2.5),
            ("salary >= %@", [2.5], salary >= 2.5),
            ("salary => %@", [2.5], salary >= 2.5),
            ("10 < age", [], .comparison(key: "age", op: .greater, value: .integer(10), options: [])),
            ("age == %d", [Int16(3)], .comparison(key: "age", op: .equal, value: .integer(3), options: [])),
            (
                "age == %i OR age == %ld OR age == %lld", [1, 2, Int64(3)],
                .or([
                    .comparison(key: "age", op: .equal, value: .integer(1), options: []),
                    .comparison(key: "age", op: .equal, value: .integer(2), options: []),
                    .comparison(key: "age", op: .equal, value: .integer(3), options: []),
                ])
            ),
            ("age BETWEEN {1, 5}", [], .between(key: "age", lower: .integer(1), upper: .integer(5))),
            ("age BETWEEN %@", [[1, 5]], .between(key: "age", lower: .integer(1), upper: .integer(5))),
            ("name IN {'a', 'b'}", [], .isIn(key: "name", values: [.string("a"), .string("b")], options: [])),
            ("name IN[c] %@", [["a", "b"]], .isIn(key: "name", values: [.string("a"), .string("b")], options: .caseInsensitive)),
            ("name BEGINSWITH 'A'", [], name.beginsWith("A")),
            ("name CONTAINS[c] 'a'", [], name.contains("a", options: .caseInsensitive)),
            ("name ENDSWITH[d] 'e'", [], name.endsWith("e", options: .diacriticInsensitive)),
            ("name LIKE[cd] 'a*b?'", [], name.like("a*b?", options: [.caseInsensitive, .diacriticInsensitive])),
            ("name MATCHES '[a-z]+'", [], .text(key: "name", op: .matches, pattern: "[a-z]+", options: [])),
            ("name ==[c] 'ann'", [], name.equals("ann", options: .caseInsensitive)),
            ("name == nil", [], name.isNil),
            ("name != NULL", [], name.isNotNil),
            ("%K == 'x'", ["department.name"], Key<String>("department.name") == "x"),
            (
                "flag == YES AND flag != FALSE", [],
                .and([
                    .comparison(key: "flag", op: .equal, value: .bool(true), options: []),
                    .comparison(key: "flag", op: .notEqual, value: .bool(false), options: []),
                ])
            ),
            ("NOT name == 'a'", [], !(name == "a")),
            (
                "!(name == 'a') && age > 1 || TRUEPREDICATE", [],
                .or([.and([!(name == "a"), .comparison(key: "age", op: .greater, value: .integer(1), options: [])]), .constant(true)])
            ),
            ("FALSEPREDICATE", [], .constant(false)),
            ("employees.@count > 2", [], ToManyKey("employees").count(.greater, 2)),
            ("employees.@sum.salary >= 100", [], .aggregate(key: "employees", function: .sum, attribute: "salary", op: .greaterOrEqual, value: .integer(100))),
            ("employees.@avg.salary < 1.5", [], .aggregate(key: "employees", function: .avg, attribute: "salary", op: .less, value: .double(1.5))),
            ("ANY employees.salary > 5", [], .quantified(.any, .comparison(key: "employees.salary", op: .greater, value: .integer(5), options: []))),
            ("SOME employees.salary > 5", [], .quantified(.any, .comparison(key: "employees.salary", op: .greater, value: .integer(5), options: []))),
            ("ALL employees.salary > 5", [], .quantified(.all, .comparison(key: "employees.salary", op: .greater, value: .integer(5), options: []))),
            ("NONE employees.name BEGINSWITH 'x'", [], .quantified(.none, .text(key: "employees.name", op: .beginsWith, pattern: "x", options: []))),
            ("when > CAST(0, \"NSDate\")", [], .comparison(key: "when", op: .greater, value: .date(Date(timeIntervalSinceReferenceDate: 0)), options: [])),
            ("#order == 1", [], .comparison(key: "order", op: .equal, value: .integer(1), options: [])),
            ("name == 'it\\'s' AND name != \"say \\\"hi\\\"\"", [], .and([name == "it's", name != "say \"hi\""])),
            ("SELF.name == 'a'", [], name == "a"),
        ]
        for (format, arguments, expected) in cases {
            XCTAssertEqual(try ObjectPredicate(format: format, argumentArray: arguments), expected, format)
        }
    }

    func testObjectsAndObjectIDsAsArguments() throws {
        let directory = try TemporaryDirectory()
        let coordinator = try PersistentStoreCoordinator(model: try TestModel.make(), store: .sqlite(directory.file("s.sqlite")))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            let sales = try context.insert(Department.self)
            sales.name = "Sales"
            let ann = try context.insert(Employee.self)
            ann.name = "Ann"
            ann.department = sales
            let bob = try context.insert(Employee.self)
            bob.name = "Bob"
            try context.save()
            let fetch = { (format: String, arguments: [Any?]) throws -> [String] in
                try context.fetch(
                    FetchRequest<Employee>(
                        predicate: try ObjectPredicate(format: format, argumentArray: arguments),
                        sortDescriptors: [Key<String>("name").sorted()])
                ).map(\.name)
            }
            XCTAssertEqual(try fetch("department == %@", [sales]), ["Ann"])
            XCTAssertEqual(try fetch("department == %@", [sales.objectID]), ["Ann"])
            XCTAssertEqual(try fetch("department != %@", [sales]), ["Bob"])
            XCTAssertEqual(try fetch("department == nil", []), ["Bob"])
            XCTAssertEqual(try fetch("department != nil", []), ["Ann"])
            XCTAssertEqual(try fetch("SELF == %@", [bob]), ["Bob"])
            XCTAssertEqual(try fetch("SELF IN %@", [[ann, bob]]), ["Ann", "Bob"])
            XCTAssertEqual(try fetch("NOT SELF IN %@", [[ann.objectID]]), ["Bob"])
            XCTAssertEqual(try fetch("department IN %@", [[sales]]), ["Ann"])
            XCTAssertEqual(try context.fetch(FetchRequest<Department>(format: "employees CONTAINS %@", ann)).map(\.name), ["Sales"])
            XCTAssertEqual(try context.fetch(FetchRequest<Department>(format: "%@ IN employees", ann)).map(\.name), ["Sales"])
            XCTAssertEqual(try context.fetch(FetchRequest<Department>(format: "'Ann' IN employees.name")).map(\.name), ["Sales"])
            let optional: String? = nil
            XCTAssertEqual(try fetch("email == %@", [optional]), ["Ann", "Bob"])
        }
    }

    func testUUIDsURIsDatesAndDecimalsFromFormatLiterals() throws {
        let directory = try TemporaryDirectory()
        let coordinator = try PersistentStoreCoordinator(model: try TestModel.allTypes(), store: .sqlite(directory.file("t.sqlite")))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let uuid = UUID(uuidString: "12345678-1234-1234-1234-123456789ABC")!
        try context.performAndWait { () throws in
            let sample = try context.insertObject(entityName: "Sample")
            try sample.setValue(uuid, forKey: "uid")
            try sample.setValue(URL(string: "https://a.example/x")!, forKey: "link")
            try sample.setValue(Date(timeIntervalSinceReferenceDate: 100), forKey: "when")
            try sample.setValue(Decimal(string: "9.99")!, forKey: "amount")
            try context.save()
            let count = { (format: String) throws -> Int in
                try context.count(for: try FetchRequest<ManagedObject>(entityName: "Sample", format: format))
            }
            XCTAssertEqual(try count("uid == '12345678-1234-1234-1234-123456789abc'"), 1, "a UUID written as text, any case")
            XCTAssertEqual(try count("link == \"https://a.example/x\""), 1)
            XCTAssertEqual(try count("when > CAST(99.5, \"NSDate\") AND when < CAST(100.5, 'NSDate')"), 1)
            XCTAssertEqual(try count("amount == 9.99 AND amount > 9.989 AND amount BETWEEN {9, 10}"), 1, "decimals from number literals, exactly")
            XCTAssertThrowsError(try count("uid == 'not a uuid'"))
            try sample.setValue(Int16(7), forKey: "i16")
            try sample.setValue(Int32(3), forKey: "i32")
            try context.save()
            XCTAssertEqual(
                try count("i16 < 100000 AND i16 > -40000 AND i32 > 2.5 AND i32 < 3.5 AND i32 != 3.0000001"), 1,
                "numbers beyond an integer attribute compare as numbers")
            XCTAssertEqual(try count("i32 == 2.5 OR i16 > 100000"), 0)
            XCTAssertTrue(try ObjectPredicate(format: "i16 < 100000 AND i32 > 2.5 AND i32 < 3.5").evaluate(with: sample), "in memory too")
            XCTAssertFalse(try ObjectPredicate(format: "i32 == 2.5 OR i16 > 100000").evaluate(with: sample))
        }
    }

    func testVariablesAreSubstituted() throws {
        let template = try PredicateTemplate(format: "name == $NAME AND age >= $MIN OR department == $DEPT")
        XCTAssertEqual(template.variables, ["NAME", "MIN", "DEPT"])
        let predicate = try template.predicate(substituting: ["NAME": "Ann", "MIN": 30, "DEPT": nil])
        XCTAssertEqual(
            predicate,
            .or([
                .and([Key<String>("name") == "Ann", .comparison(key: "age", op: .greaterOrEqual, value: .integer(30), options: [])]),
                .comparison(key: "department", op: .equal, value: .null, options: []),
            ]))
        XCTAssertThrowsError(try template.predicate(substituting: ["NAME": "Ann"])) { error in
            guard case .invalidPredicateFormat(_, let position, let reason) = error as? AmbarError else { return XCTFail("\(error)") }
            XCTAssertEqual(position, 25)
            XCTAssertTrue(reason.contains("$MIN"), reason)
        }
        XCTAssertThrowsError(try ObjectPredicate(format: "name == $NAME"), "a variable needs PredicateTemplate")
    }

    func testNestingUpToTheLimitParses() throws {
        let deep = String(repeating: "(", count: 100) + "a == 1" + String(repeating: ")", count: 100)
        XCTAssertEqual(try ObjectPredicate(format: deep), .comparison(key: "a", op: .equal, value: .integer(1), options: []))
    }

    func testErrorsQuoteTheFormatAndPointAtThePosition() throws {
        let cases: [(String, [Any?], Int, String)] = [
            ("name == ", [], 8, "ends where"),
            ("name === 'a'", [], 7, "key path or a value"),
            ("SUBQUERY(employees, $e, $e.salary > 5) > 0", [], 0, "SUBQUERY(…).@count"),
            ("FUNCTION(name, 'uppercaseString') == 'A'", [], 0, "FUNCTION is not supported"),
            ("salary + 1 > 5", [], 7, "arithmetic"),
            ("name == 'open", [], 8, "not closed"),
            ("name == %@", [], 8, "no argument"),
            ("name == %@", ["a", "b"], 10, "2 arguments were given"),
            ("name MATCHES '(unclosed'", [], 13, "regular expression"),
            ("name = 'a' AND", [], 14, "ends where"),
            ("(name = 'a'", [], 11, "close the parenthesis"),
            ("name BETWEEN {1}", [], 13, "BETWEEN needs"),
            ("name CONTAINS otherName", [], 0, "between two key paths is not supported"),
            ("age == %d", ["x"], 7, "needs an integer"),
            ("name ==[x] 'a'", [], 7, "unknown comparison option"),
            (String(repeating: "(", count: 101) + "a == 1" + String(repeating: ")", count: 101), [], 100, "more than 100 levels deep"),
            ("a IN " + String(repeating: "{", count: 5000), [], 105, "more than 100 levels deep"),
            (String(repeating: "NOT ", count: 200) + "a == 1", [], 400, "more than 100 levels deep"),
        ]
        for (format, arguments, position, text) in cases {
            XCTAssertThrowsError(try ObjectPredicate(format: format, argumentArray: arguments), format) { error in
                guard case .invalidPredicateFormat(let quoted, let at, let reason) = error as? AmbarError else { return XCTFail("\(format): \(error)") }
                XCTAssertEqual(quoted, format)
                XCTAssertEqual(at, position, "\(format): \(reason)")
                XCTAssertTrue(reason.contains(text), "\(format): \(reason)")
                XCTAssertTrue("\(error)".contains(format) && "\(error)".contains("^"), "the message quotes the format and marks the position")
            }
        }
    }

    func testQuantifiersAggregatesAndKeyPathsAgreeInSQLAndMemory() throws {
        let directory = try TemporaryDirectory()
        let data = try DepartmentsInTwoContexts(count: 8, seed: 11, directory: directory, saved: .sqlite(directory.file("sql.sqlite")))
        let (sql, memory, plan) = (data.sql, data.memory, data.plan)
        let departmentFormats = [
            "ANY employees.salary > 50", "SOME employees.salary > 50", "ALL employees.salary > 50", "NONE employees.salary > 50",
            "employees.salary > 50", "NOT ALL employees.name BEGINSWITH 'E1'", "ALL employees.age < 2",
            "employees.@count >= 2", "employees.@count == 0", "employees.@count BETWEEN {1, 2}",
            "employees.@sum.salary > 100", "employees.@sum.salary == 0", "employees.@avg.salary >= 40", "employees.@avg.salary == nil",
            "employees.@min.age == 0", "employees.@max.salary < 50", "employees.@max.name == 'E3'", "employees.@min.salary IN {0, 10, 20}",
            "'E1' IN employees.name", "ANY employees.name IN {'E1', 'E2'}", "ANY employees.name MATCHES 'E[12]'",
        ]
        for format in departmentFormats {
            let request = try FetchRequest<Department>(format: format, sortDescriptors: [Key<String>("name").sorted()])
            let a = try sql.performAndWait { try sql.fetch(request).map(\.name) }
            let b = try memory.performAndWait { try memory.fetch(request).map(\.name) }
            XCTAssertEqual(a, b, format)
        }
        let employeeFormats = [
            "department.name == 'D1'", "department.name != 'D1'", "department == nil", "department != nil",
            "department.name IN {'D0', 'D2'}", "ANY department.name == 'D3'", "ALL department.name == 'D3'",
            "department.employees.@count > 2", "ANY department.employees.salary >= 90",
        ]
        for format in employeeFormats {
            let request = try FetchRequest<Employee>(format: format, sortDescriptors: [Key<String>("name").sorted(), Key<Int16>("age").sorted()])
            let a = try sql.performAndWait { try sql.fetch(request).map { "\($0.name)@\($0.department?.name ?? "-")" } }
            let b = try memory.performAndWait { try memory.fetch(request).map { "\($0.name)@\($0.department?.name ?? "-")" } }
            XCTAssertEqual(a, b, format)
        }
        // Independently computed answers for a few.
        let expected = plan.filter { d in !d.employees.isEmpty && d.employees.allSatisfy { $0.1 > 50 } }.map(\.name)
        XCTAssertEqual(
            try sql.performAndWait {
                try sql.fetch(
                    try FetchRequest<Department>(
                        format: "ALL employees.salary > 50 AND employees.@count > 0",
                        sortDescriptors: [Key<String>("name").sorted()])
                ).map(\.name)
            }, expected)
        let total = plan.filter { d in d.employees.map(\.1).reduce(0, +) > 100 }.map(\.name)
        XCTAssertEqual(
            try sql.performAndWait {
                try sql.fetch(
                    try FetchRequest<Department>(
                        format: "employees.@sum.salary > 100",
                        sortDescriptors: [Key<String>("name").sorted()])
                ).map(\.name)
            }, total)
    }
}
