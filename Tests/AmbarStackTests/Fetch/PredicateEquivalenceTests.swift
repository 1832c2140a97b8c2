import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// A small deterministic generator (SplitMix64), so failures reproduce from the printed seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Property-based: random data and random predicates give the same results evaluated as SQL by
/// the store and evaluated in memory (pending inserts of a context over an empty store).
final class PredicateEquivalenceTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    static let texts = [
        "", "a", "A", "abc", "ABC", "Abc", "é", "e\u{301}", "E", "ÉCOLE", "école", "100%", "a_b", "a*b",
        "a?b", "back\\slash", "zebra", "Zürich", "zurich", "straße", "STRASSE", "日本", "x y", "%", "_",
    ]
    static let patterns = ["a", "A", "é", "e", "%", "_", "*", "?", "a*", "*b", "a?c", "\\*", "a\\?b", "", "É", "z*h", "*a*"]
    static let regularExpressions = ["a.*", ".*b.*", "[a-z]+", "[A-Z]+", "a|ab", "e\\u0301?", ".*(é|e).*", "", ".", "x y", "\\d+%", "[^a]*", "z.*h"]

    func randomValue(_ attribute: String, _ rng: inout SeededRandom, allowNil: Bool = true) -> AttributeValue {
        if allowNil && Int.random(in: 0..<6, using: &rng) == 0 { return .null }
        switch attribute {
        case "text": return .string(Self.texts.randomElement(using: &rng)!)
        case "i16": return .integer(Int64(Int.random(in: -3...3, using: &rng)))
        case "i32": return .integer(Int64(Int.random(in: -1000...1000, using: &rng)))
        case "i64": return .integer([Int64.min, -1, 0, 1, 42, Int64.max].randomElement(using: &rng)!)
        case "dbl": return .double([-1.5, 0, 0.1, 0.30000000000000004, 2, 1e10, -0.0].randomElement(using: &rng)!)
        case "flt": return .double(Double(Float([0.5, 1.25, -3].randomElement(using: &rng)!)))
        case "flag": return .bool(Bool.random(using: &rng))
        case "when": return .date(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -5...5, using: &rng)) * 86_400.5))
        case "blob": return .data(Data([UInt8.random(in: 0...3, using: &rng), UInt8.random(in: 0...3, using: &rng)]))
        case "uid":
            return .uuid(
                UUID(
                    uuidString: ["00000000-0000-0000-0000-000000000001", "FFFFFFFF-0000-0000-0000-000000000000", "12345678-1234-1234-1234-123456789ABC"]
                        .randomElement(using: &rng)!)!)
        case "link": return .url(URL(string: ["https://a.example/x", "https://b.example/y?q=1", "file:///tmp/z"].randomElement(using: &rng)!)!)
        case "amount": return .decimal(Decimal(string: ["0", "0.1", "10", "9.99", "-2.5", "100000000000000000000.5", "2.50"].randomElement(using: &rng)!)!)
        default: return .null
        }
    }

    static let attributes = ["text", "i16", "i32", "i64", "dbl", "flt", "flag", "when", "blob", "uid", "link", "amount"]
    static let textual: Set<String> = ["text", "uid", "link"]

    func randomPredicate(_ rng: inout SeededRandom, depth: Int = 0) -> ObjectPredicate {
        let roll = Int.random(in: 0..<(depth >= 2 ? 6 : 9), using: &rng)
        let attribute = Self.attributes.randomElement(using: &rng)!
        let options: TextOptions = [[], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive]].randomElement(using: &rng)!
        switch roll {
        case 0, 1:
            let op: ComparisonOperator = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].randomElement(using: &rng)!
            return .comparison(key: attribute, op: op, value: randomValue(attribute, &rng), options: Self.textual.contains(attribute) ? options : TextOptions())
        case 2:
            let values = (0..<Int.random(in: 0...3, using: &rng)).map { _ in randomValue(attribute, &rng) }
            return .isIn(key: attribute, values: values, options: Self.textual.contains(attribute) ? options : TextOptions())
        case 3:
            return .between(key: attribute, lower: randomValue(attribute, &rng, allowNil: false), upper: randomValue(attribute, &rng, allowNil: false))
        case 4, 5:
            let op: TextOperator = [.beginsWith, .contains, .endsWith, .like, .matches].randomElement(using: &rng)!
            let pattern = op == .matches ? Self.regularExpressions.randomElement(using: &rng)! : Self.patterns.randomElement(using: &rng)!
            return .text(key: "text", op: op, pattern: pattern, options: options)
        case 6:
            return .and((0..<Int.random(in: 0...3, using: &rng)).map { _ in randomPredicate(&rng, depth: depth + 1) })
        case 7:
            return .or((0..<Int.random(in: 0...3, using: &rng)).map { _ in randomPredicate(&rng, depth: depth + 1) })
        default:
            return .not(randomPredicate(&rng, depth: depth + 1))
        }
    }

    /// The same `Sample` rows in two contexts: saved in a store of the run's backend (fetches run
    /// as SQL), and pending over an empty SQLite store (fetches evaluate in memory).
    func samples(_ rows: [[AttributeValue]], named name: String) throws -> (sql: ManagedObjectContext, memory: ManagedObjectContext) {
        let model = try TestModel.allTypes()
        let saved = try PersistentStoreCoordinator(model: model, store: try store("\(name).sqlite"))
        let empty = try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file("\(name)-memory.sqlite")))
        let sql = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: saved)
        let memory = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: empty)
        for context in [sql, memory] {
            try context.performAndWait {
                for row in rows {
                    let object = try context.insertObject(entityName: "Sample")
                    for (attribute, value) in zip(Self.attributes, row) { try object.setValue(value, forKey: attribute) }
                }
            }
        }
        try sql.performAndWait { try sql.save() }
        return (sql, memory)
    }

    /// One row's values as a comparable string.
    func render(_ object: ManagedObject) throws -> String {
        try Self.attributes.map { "\(try object.value(forKey: $0))" }.joined(separator: "|")
    }

    func testSQLAndMemoryAgreeOnRandomPredicatesAndSorts() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["AMBAR_PBT_SEED"] ?? "") ?? 20_261_122
        var rng = SeededRandom(seed: seed)
        let rows = (0..<150).map { _ in Self.attributes.map { randomValue($0, &rng) } }
        let (sql, memory) = try samples(rows, named: "sql")

        var checked = 0
        var nonTrivial = 0
        for n in 0..<400 {
            let predicate = randomPredicate(&rng)
            var sorts: [ObjectSortDescriptor] = []
            for _ in 0..<Int.random(in: 0...2, using: &rng) {
                let key = Self.attributes.filter { $0 != "blob" }.randomElement(using: &rng)!
                sorts.append(
                    ObjectSortDescriptor(
                        key: key, ascending: Bool.random(using: &rng),
                        options: Self.textual.contains(key) && Bool.random(using: &rng) ? TextOptions.caseInsensitive : TextOptions()))
            }
            let request = FetchRequest<ManagedObject>(entityName: "Sample", predicate: predicate, sortDescriptors: sorts)
            let fromSQL = try sql.performAndWait { try sql.fetch(request).map(render) }
            let fromMemory = try memory.performAndWait { try memory.fetch(request).map(render) }
            if fromSQL != fromMemory {
                XCTFail(
                    "seed \(seed), case \(n): SQL and memory disagree for \(predicate) sorted by \(sorts)\nSQL:    \(fromSQL.count) \(fromSQL.prefix(5))\nmemory: \(fromMemory.count) \(fromMemory.prefix(5))"
                )
                return
            }
            // Rendered as an NSPredicate format string and parsed back, it selects the same rows,
            // in SQL and in memory.
            var renderer = PredicateFormatRenderer(seed: seed &+ UInt64(n))
            let format = renderer.render(predicate)
            let parsed: ObjectPredicate
            do {
                parsed = try ObjectPredicate(format: format, argumentArray: renderer.arguments)
            } catch {
                XCTFail("seed \(seed), case \(n): \(format) with \(renderer.arguments) did not parse: \(error)")
                return
            }
            let parsedRequest = FetchRequest<ManagedObject>(entityName: "Sample", predicate: parsed, sortDescriptors: sorts)
            let parsedSQL = try sql.performAndWait { try sql.fetch(parsedRequest).map(render) }
            let parsedMemory = try memory.performAndWait { try memory.fetch(parsedRequest).map(render) }
            XCTAssertEqual(parsedSQL, fromSQL, "seed \(seed), case \(n): the format \(format) selects other rows in SQL than \(predicate)")
            XCTAssertEqual(parsedMemory, fromSQL, "seed \(seed), case \(n): the format \(format) selects other rows in memory than \(predicate)")
            // ObjectPredicate.evaluate on saved objects agrees too.
            let evaluated = try sql.performAndWait {
                try sql.fetch(FetchRequest<ManagedObject>(entityName: "Sample")).filter { try predicate.evaluate(with: $0) }.count
            }
            XCTAssertEqual(evaluated, fromSQL.count, "seed \(seed), case \(n): evaluate(with:) on \(predicate)")
            checked += 1
            if fromSQL.count > 0 && fromSQL.count < rows.count { nonTrivial += 1 }
        }
        XCTAssertEqual(checked, 400)
        XCTAssertGreaterThan(nonTrivial, 100, "the generator must produce selective predicates")
    }

    func testKeyPathsAnyAndCountAgree() throws {
        let directory = try TemporaryDirectory()
        let data = try DepartmentsInTwoContexts(count: 6, seed: 7, directory: directory, saved: try store("departments.sqlite"))
        let (sql, memory) = (data.sql, data.memory)
        let departmentPredicates: [ObjectPredicate] = [
            ToManyKey("employees").any(Key<Double>("salary") > 50),
            ToManyKey("employees").none(Key<String>("name") == "E1"),
            ToManyKey("employees").count(.greaterOrEqual, 2),
            ToManyKey("employees").count(.equal, 0),
            ToManyKey("employees").any(Key<String>("name").beginsWith("e", options: .caseInsensitive) && Key<Int16>("age") < 2),
        ]
        let employeePredicates: [ObjectPredicate] = [
            Key<String>("department.name") == "D1",
            Key<String>("department.name") != "D1",
            Key<String>("department.name").isNil,
            Key<Double>("department.budget") >= 0,
            ToOneKey("department") == nil,
            !(Key<String>("department.name").isIn(["D0", "D2"])),
        ]
        for predicate in departmentPredicates {
            let request = FetchRequest<Department>(predicate: predicate, sortDescriptors: [Key<String>("name").sorted()])
            let a = try sql.performAndWait { try sql.fetch(request).map(\.name) }
            let b = try memory.performAndWait { try memory.fetch(request).map(\.name) }
            XCTAssertEqual(a, b, "\(predicate)")
        }
        for predicate in employeePredicates {
            let request = FetchRequest<Employee>(
                predicate: predicate, sortDescriptors: [Key<String>("department.name").sorted(), Key<String>("name").sorted(), Key<Int16>("age").sorted()])
            let a = try sql.performAndWait { try sql.fetch(request).map { "\($0.name)@\($0.department?.name ?? "-")" } }
            let b = try memory.performAndWait { try memory.fetch(request).map { "\($0.name)@\($0.department?.name ?? "-")" } }
            XCTAssertEqual(a, b, "\(predicate)")
        }
    }
}
