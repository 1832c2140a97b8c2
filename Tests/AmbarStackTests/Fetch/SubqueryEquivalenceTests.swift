import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Property-based, as `testSQLAndMemoryAgreeOnRandomKeyPathComparisons`: random subqueries over
/// random orders and lines — conditions on the line, on the order around it (`.enclosing`,
/// `.outer`), through to-one key paths, nested two deep, inside `AND`/`OR`/`NOT` — select the
/// same orders as SQL and in memory, and again when written as a format string and parsed back.
extension KeyComparisonTests {
    private static let operators: [ComparisonOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]

    /// Orders with 0–4 lines each and one of five customers, saved in a store of the run's backend
    /// and pending over an empty SQLite store.
    private func randomOrders(_ rng: inout SeededRandom) throws -> (sql: ManagedObjectContext, memory: ManagedObjectContext) {
        let model = try shopModel()
        let sql = ManagedObjectContext(
            concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: model, store: try store("subquery.sqlite")))
        let memory = ManagedObjectContext(
            concurrencyType: .privateQueue,
            coordinator: try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file("subquery-memory.sqlite"))))
        func maybe(_ value: AttributeValue, _ rng: inout SeededRandom) -> AttributeValue {
            Int.random(in: 0..<5, using: &rng) == 0 ? .null : value
        }
        let customers: [AttributeValue] = (0..<5).map { _ in maybe(.double(Double(Int.random(in: 0...8, using: &rng))), &rng) }
        let orders: [(values: [String: AttributeValue], owner: Int, lines: [(Double, Int64)])] = (0..<40).map { n in
            let values: [String: AttributeValue] = [
                "name": .string("o\(n)"), "nickname": maybe(.string(["o\(n)", "x"].randomElement(using: &rng)!), &rng),
                "quantity": maybe(.integer(Int64(Int.random(in: 0...3, using: &rng))), &rng),
                "budget": maybe(.double(Double(Int.random(in: 0...8, using: &rng))), &rng), "rush": .bool(Bool.random(using: &rng)),
            ]
            let lines = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                (Double(Int.random(in: 0...16, using: &rng)) / 2, Int64(Int.random(in: 1...3, using: &rng)))
            }
            return (values, Int.random(in: 0..<5, using: &rng), lines)
        }
        for context in [sql, memory] {
            try context.performAndWait {
                var owners: [ManagedObject] = []
                for (n, budget) in customers.enumerated() {
                    let customer = try context.insertObject(entityName: "Customer")
                    try customer.setValue(.string("c\(n)"), forKey: "name")
                    try customer.setValue(budget, forKey: "budget")
                    owners.append(customer)
                }
                for order in orders {
                    let object = try context.insertObject(entityName: "Order")
                    for (key, value) in order.values { try object.setValue(value, forKey: key) }
                    try object.setObject(owners[order.owner], forKey: "owner")
                    for (price, count) in order.lines {
                        let line = try context.insertObject(entityName: "Line")
                        try line.setValue(.double(price), forKey: "price")
                        try line.setValue(.integer(count), forKey: "count")
                        try line.setObject(object, forKey: "order")
                    }
                }
            }
        }
        try sql.performAndWait { try sql.save() }
        return (sql, memory)
    }

    /// A condition on a line; `depth` 0 is a line of the order, 1 a line of a subquery inside.
    private func randomLinePredicate(_ rng: inout SeededRandom, depth: Int) -> ObjectPredicate {
        let op = Self.operators.randomElement(using: &rng)!
        switch Int.random(in: 0..<(depth == 0 ? 9 : 7), using: &rng) {
        case 0: return .comparison(key: "price", op: op, value: .double(Double(Int.random(in: 0...16, using: &rng)) / 2), options: [])
        case 1: return .comparison(key: "count", op: op, value: .integer(Int64(Int.random(in: 1...3, using: &rng))), options: [])
        case 2:
            // The order's budget or quantity: one range out, or two from a nested subquery.
            let outer = ["budget", "quantity"].randomElement(using: &rng)!
            return .keyComparison(.key(["price", "count"].randomElement(using: &rng)!), op, .outer(outer, levels: depth + 1))
        case 3:
            let inner = ObjectPredicate.comparison(key: "rush", op: .equal, value: .bool(Bool.random(using: &rng)), options: [])
            return depth == 0 ? .enclosing(inner) : .enclosing(.enclosing(inner))
        case 4: return .keyComparison(.key("order.owner.budget"), op, .key("price"))
        case 5: return .not(randomLinePredicate(&rng, depth: depth))
        case 6: return randomLinePredicate(&rng, depth: depth) && randomLinePredicate(&rng, depth: depth)
        case 7:
            // A line of the same order, compared with the line of the enclosing subquery.
            let nested = ObjectPredicate.keyComparison(.key("price"), op, .outer("price"))
            let more = Bool.random(using: &rng) ? nested && randomLinePredicate(&rng, depth: 1) : nested
            return .subquery(key: "order.items", more, op: Self.operators.randomElement(using: &rng)!, count: Int.random(in: 0...2, using: &rng))
        default: return randomLinePredicate(&rng, depth: depth) || randomLinePredicate(&rng, depth: depth)
        }
    }

    private func randomSubquery(_ rng: inout SeededRandom, depth: Int = 0) -> ObjectPredicate {
        switch Int.random(in: 0..<(depth >= 2 ? 3 : 6), using: &rng) {
        case 0, 1, 2:
            return .subquery(
                key: "items", randomLinePredicate(&rng, depth: 0), op: Self.operators.randomElement(using: &rng)!,
                count: Int.random(in: 0...3, using: &rng))
        case 3: return .not(randomSubquery(&rng, depth: depth + 1))
        case 4: return randomSubquery(&rng, depth: depth + 1) && .comparison(key: "rush", op: .equal, value: .bool(true), options: [])
        default: return randomSubquery(&rng, depth: depth + 1) || randomSubquery(&rng, depth: depth + 1)
        }
    }

    func testSQLAndMemoryAgreeOnRandomSubqueries() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["AMBAR_PBT_SEED"] ?? "") ?? 20_261_127
        var rng = SeededRandom(seed: seed)
        let (sql, memory) = try randomOrders(&rng)
        var nonTrivial = 0
        for n in 0..<200 {
            let predicate = randomSubquery(&rng)
            let fromSQL = try names(sql, predicate)
            let fromMemory = try names(memory, predicate)
            guard fromSQL == fromMemory else {
                return XCTFail("seed \(seed), case \(n): SQL and memory disagree for \(predicate)\nSQL:    \(fromSQL)\nmemory: \(fromMemory)")
            }
            var renderer = SubqueryFormatRenderer()
            let format = renderer.render(predicate, scopes: [nil])
            let parsed = try ObjectPredicate(format: format)
            XCTAssertEqual(try names(sql, parsed), fromSQL, "seed \(seed), case \(n): the format \(format) selects other orders than \(predicate)")
            if fromSQL.count > 0 && fromSQL.count < 40 { nonTrivial += 1 }
        }
        XCTAssertGreaterThan(nonTrivial, 50, "the generator must produce selective subqueries")
    }
}

/// Writes the predicates `randomSubquery` makes as format strings: each subquery names its own
/// variable, key paths are prefixed with the variable of the scope they read, bare on the order.
private struct SubqueryFormatRenderer {
    private var variables = 0

    /// `scopes`: the variable of each enclosing scope, outermost first (`nil`: the order).
    mutating func render(_ predicate: ObjectPredicate, scopes: [String?]) -> String {
        func prefix(_ levels: Int) -> String { scopes[scopes.count - 1 - levels].map { "\($0)." } ?? "" }
        func expression(_ e: ObjectExpression) -> String {
            switch e {
            case .key(let key): return prefix(0) + key
            case .outer(let key, let levels): return prefix(levels) + key
            default: return "\(e)"
            }
        }
        switch predicate {
        case .comparison(let key, let op, let value, _): return "\(prefix(0))\(key) \(op.symbol) \(Self.literal(value))"
        case .keyComparison(let a, let op, let b, _): return "\(expression(a)) \(op.symbol) \(expression(b))"
        case .enclosing(let inner): return render(inner, scopes: Array(scopes.dropLast()))
        case .subquery(let key, let inner, let op, let count):
            variables += 1
            let variable = "$v\(variables)"
            return "SUBQUERY(\(prefix(0))\(key), \(variable), \(render(inner, scopes: scopes + [variable]))).@count \(op.symbol) \(count)"
        case .not(let inner): return "NOT (\(render(inner, scopes: scopes)))"
        case .and(let parts): return "(" + parts.map { render($0, scopes: scopes) }.joined(separator: " AND ") + ")"
        case .or(let parts): return "(" + parts.map { render($0, scopes: scopes) }.joined(separator: " OR ") + ")"
        default: return "\(predicate)"
        }
    }

    private static func literal(_ value: AttributeValue) -> String {
        switch value {
        case .double(let d): return "\(d)"
        case .integer(let n): return "\(n)"
        case .bool(let b): return b ? "YES" : "NO"
        default: return "\(value)"
        }
    }
}

extension ComparisonOperator {
    fileprivate var symbol: String {
        switch self {
        case .equal: return "=="
        case .notEqual: return "!="
        case .less: return "<"
        case .lessOrEqual: return "<="
        case .greater: return ">"
        case .greaterOrEqual: return ">="
        }
    }
}
