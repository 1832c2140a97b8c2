import AmbarModels
import Foundation
import XCTest

/// A declared class with a property of each kind the key-path predicates compare.
@Model final class KeyPathSample: ManagedObject {
    var serial: Int = 0
    var text: String = ""
    var number: Int = 0
    var amount: Double = 0
    var flag: Bool = false
    var when: Date = Date(timeIntervalSinceReferenceDate: 0)
    var note: String?
    var count: Int?
}

/// Property-based, like ``PredicateEquivalenceTests`` for the builder: random Foundation
/// predicates (as `#Predicate` builds them) and `SortDescriptor`s give the same objects, in the
/// same order, evaluated as SQL by the store, in memory over a context's unsaved objects, and by
/// Foundation itself.
final class KeyPathPredicateEquivalenceTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    typealias Expression = any StandardPredicateExpression<Bool>
    typealias Input = PredicateExpressions.Variable<KeyPathSample>

    static let texts = ["", "a", "A", "abc", "ABC", "Abc", "é", "école", "100%", "a_b", "a*b", "zebra", "Zürich", "x y", "日本"]
    static let needles = ["a", "A", "b", "é", "%", "_", "*", "", "ab", "Z", "日"]
    static let numbers = [-3, -1, 0, 1, 2, 42]
    static let amounts = [-1.5, 0, 0.1, 2, 1e10]
    static let days = (-3...3).map { Date(timeIntervalSinceReferenceDate: Double($0) * 86_400.5) }

    // MARK: Expressions, built as the macro builds them

    static func keyPath<V>(_ input: Input, _ path: KeyPath<KeyPathSample, V> & Sendable) -> PredicateExpressions.KeyPath<Input, V> {
        PredicateExpressions.build_KeyPath(root: input, keyPath: path)
    }

    static func compare<V: Comparable & Codable & Sendable>(_ input: Input, _ path: KeyPath<KeyPathSample, V> & Sendable, _ value: V, _ roll: Int) -> Expression
    {
        let lhs = keyPath(input, path)
        let rhs = PredicateExpressions.build_Arg(value)
        switch roll % 6 {
        case 0: return PredicateExpressions.build_Equal(lhs: lhs, rhs: rhs)
        case 1: return PredicateExpressions.build_NotEqual(lhs: lhs, rhs: rhs)
        case 2: return PredicateExpressions.build_Comparison(lhs: lhs, rhs: rhs, op: .lessThan)
        case 3: return PredicateExpressions.build_Comparison(lhs: lhs, rhs: rhs, op: .lessThanOrEqual)
        case 4: return PredicateExpressions.build_Comparison(lhs: rhs, rhs: lhs, op: .greaterThan)  // the value first
        default: return PredicateExpressions.build_Comparison(lhs: lhs, rhs: rhs, op: .greaterThanOrEqual)
        }
    }

    static func and(_ lhs: Expression, _ rhs: Expression) -> Expression {
        func open<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(_ l: L, _ r: R) -> Expression {
            PredicateExpressions.build_Conjunction(lhs: l, rhs: r)
        }
        return open(lhs, rhs)
    }

    static func or(_ lhs: Expression, _ rhs: Expression) -> Expression {
        func open<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(_ l: L, _ r: R) -> Expression {
            PredicateExpressions.build_Disjunction(lhs: l, rhs: r)
        }
        return open(lhs, rhs)
    }

    static func not(_ operand: Expression) -> Expression {
        func open<O: StandardPredicateExpression<Bool>>(_ o: O) -> Expression { PredicateExpressions.build_Negation(o) }
        return open(operand)
    }

    static func random(_ input: Input, _ rng: inout SeededRandom, depth: Int = 0) -> Expression {
        let roll = Int.random(in: 0..<(depth >= 2 ? 12 : 15), using: &rng)
        let op = Int.random(in: 0..<6, using: &rng)
        switch roll {
        case 0: return compare(input, \.number, numbers.randomElement(using: &rng)!, op)
        case 1: return compare(input, \.amount, amounts.randomElement(using: &rng)!, op)
        case 2: return compare(input, \.when, days.randomElement(using: &rng)!, op)
        case 3: return compare(input, \.text, texts.randomElement(using: &rng)!, op)
        case 4: return keyPath(input, \.flag)
        case 5:
            let needle = needles.randomElement(using: &rng)!
            return Bool.random(using: &rng)
                ? PredicateExpressions.build_contains(keyPath(input, \.text), PredicateExpressions.build_Arg(needle))
                : PredicateExpressions.build_starts(keyPath(input, \.text), with: PredicateExpressions.build_Arg(needle))
        case 6:
            let list = (0..<Int.random(in: 0...3, using: &rng)).map { _ in numbers.randomElement(using: &rng)! }
            return PredicateExpressions.build_contains(PredicateExpressions.build_Arg(list), keyPath(input, \.number))
        case 7:
            let bounds = [numbers.randomElement(using: &rng)!, numbers.randomElement(using: &rng)!].sorted()
            return Bool.random(using: &rng)
                ? PredicateExpressions.build_contains(PredicateExpressions.build_Arg(bounds[0]...bounds[1]), keyPath(input, \.number))
                : PredicateExpressions.build_contains(PredicateExpressions.build_Arg(bounds[0]..<bounds[1]), keyPath(input, \.number))
        case 8:
            let note: String? = Bool.random(using: &rng) ? nil : needles.randomElement(using: &rng)!
            return Bool.random(using: &rng)
                ? PredicateExpressions.build_Equal(lhs: keyPath(input, \.note), rhs: PredicateExpressions.build_Arg(note))
                : PredicateExpressions.build_NotEqual(lhs: keyPath(input, \.note), rhs: PredicateExpressions.build_Arg(note))
        case 9:
            let count: Int? = Bool.random(using: &rng) ? nil : numbers.randomElement(using: &rng)!
            return PredicateExpressions.build_Equal(lhs: keyPath(input, \.count), rhs: PredicateExpressions.build_Arg(count))
        case 10: return not(keyPath(input, \.flag))
        case 11: return compare(input, \.serial, Int.random(in: 0..<120, using: &rng), op)
        case 12: return and(random(input, &rng, depth: depth + 1), random(input, &rng, depth: depth + 1))
        case 13: return or(random(input, &rng, depth: depth + 1), random(input, &rng, depth: depth + 1))
        default: return not(random(input, &rng, depth: depth + 1))
        }
    }

    static func randomSorts(_ rng: inout SeededRandom) -> [SortDescriptor<KeyPathSample>] {
        var sorts: [SortDescriptor<KeyPathSample>] = []
        for _ in 0..<Int.random(in: 0...2, using: &rng) {
            let order: SortOrder = Bool.random(using: &rng) ? .forward : .reverse
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: sorts.append(SortDescriptor(\.number, order: order))
            case 1: sorts.append(SortDescriptor(\.amount, order: order))
            case 2: sorts.append(SortDescriptor(\.when, order: order))
            case 3: sorts.append(SortDescriptor(\.text, order: order))
            default: sorts.append(SortDescriptor(\.text, comparator: .lexical, order: order))
            }
        }
        return sorts + [SortDescriptor(\.serial)]  // ties in a known order
    }

    // MARK: The test

    func testSQLMemoryAndFoundationAgreeOnRandomKeyPathPredicates() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["AMBAR_PBT_SEED"] ?? "") ?? 20_261_124
        var rng = SeededRandom(seed: seed)
        let model = try ManagedObjectModel(declaring: [KeyPathSample.self])
        let saved = try PersistentStoreCoordinator(model: model, store: try store("sql.sqlite"))
        let empty = try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file("memory.sqlite")))
        let sql = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: saved)
        let memory = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: empty)
        for context in [sql, memory] {
            var values = SeededRandom(seed: seed ^ 0x5EED)
            try context.performAndWait {
                for serial in 0..<120 {
                    let sample = KeyPathSample()
                    sample.serial = serial
                    sample.text = Self.texts.randomElement(using: &values)!
                    sample.number = Self.numbers.randomElement(using: &values)!
                    sample.amount = Self.amounts.randomElement(using: &values)!
                    sample.flag = Bool.random(using: &values)
                    sample.when = Self.days.randomElement(using: &values)!
                    sample.note = Bool.random(using: &values) ? nil : Self.needles.randomElement(using: &values)!
                    sample.count = Bool.random(using: &values) ? nil : Self.numbers.randomElement(using: &values)!
                    try context.insert(sample)
                }
            }
        }
        try sql.performAndWait { try sql.save() }
        let all: [KeyPathSample] = try sql.performAndWait { try sql.fetch(FetchRequest<KeyPathSample>()) }

        var nonTrivial = 0
        for n in 0..<300 {
            var local = rng
            let predicate = Predicate<KeyPathSample> { input in Self.random(input, &local) }
            rng = local
            let sorts = Self.randomSorts(&rng)
            let request = try FetchRequest<KeyPathSample>(predicate: predicate, sortBy: sorts)
            let fromSQL = try sql.performAndWait { try sql.fetch(request).map(\.serial) }
            let fromMemory = try memory.performAndWait { try memory.fetch(request).map(\.serial) }
            let fromFoundation = try sql.performAndWait { try all.filter { try predicate.evaluate($0) }.sorted(using: sorts).map(\.serial) }
            if fromSQL != fromFoundation || fromMemory != fromFoundation {
                XCTFail(
                    """
                    seed \(seed), case \(n): \(predicate.expression) sorted by \(sorts.map { "\($0.keyPath.map { "\($0)" } ?? "?") \($0.order)" })
                    SQL:        \(fromSQL.count) \(fromSQL.prefix(12))
                    memory:     \(fromMemory.count) \(fromMemory.prefix(12))
                    Foundation: \(fromFoundation.count) \(fromFoundation.prefix(12))
                    """)
                return
            }
            if fromSQL.count > 0 && fromSQL.count < all.count { nonTrivial += 1 }
        }
        XCTAssertGreaterThan(nonTrivial, 100, "the generator must produce selective predicates")
    }
}
