import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Property-based, as `testSQLAndMemoryAgreeOnRandomPredicatesAndSorts`: random comparisons of
/// two attributes (numbers of every width with each other, and each other type with itself)
/// select the same rows as SQL and in memory, and again when rendered as a format string and
/// parsed back.
extension PredicateEquivalenceTests {
    private static let numeric = ["i16", "i32", "i64", "dbl", "flt", "flag"]
    private static let comparableWithItself = ["text", "when", "uid", "link", "amount"]

    private func randomKeyComparison(_ rng: inout SeededRandom, depth: Int = 0) -> ObjectPredicate {
        let op: ComparisonOperator = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].randomElement(using: &rng)!
        switch Int.random(in: 0..<(depth >= 2 ? 3 : 5), using: &rng) {
        case 0, 1:
            return .keyComparison(.key(Self.numeric.randomElement(using: &rng)!), op, .key(Self.numeric.randomElement(using: &rng)!))
        case 2:
            let attribute = Self.comparableWithItself.randomElement(using: &rng)!
            // The same attribute on both sides still tests nil handling: nil == nil, nil < nil.
            return .keyComparison(.key(attribute), op, .key(attribute))
        case 3:
            return .and((0..<Int.random(in: 1...3, using: &rng)).map { _ in randomKeyComparison(&rng, depth: depth + 1) })
        default:
            return .not(.or((0..<Int.random(in: 1...2, using: &rng)).map { _ in randomKeyComparison(&rng, depth: depth + 1) }))
        }
    }

    func testSQLAndMemoryAgreeOnRandomKeyPathComparisons() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["AMBAR_PBT_SEED"] ?? "") ?? 20_261_126
        var rng = SeededRandom(seed: seed)
        let rows = (0..<120).map { _ in Self.attributes.map { randomValue($0, &rng) } }
        let (sql, memory) = try samples(rows, named: "keys")
        var nonTrivial = 0
        for n in 0..<250 {
            let predicate = randomKeyComparison(&rng)
            let request = FetchRequest<ManagedObject>(entityName: "Sample", predicate: predicate)
            let fromSQL = try sql.performAndWait { try sql.fetch(request).map(render) }.sorted()
            let fromMemory = try memory.performAndWait { try memory.fetch(request).map(render) }.sorted()
            guard fromSQL == fromMemory else {
                return XCTFail("seed \(seed), case \(n): SQL and memory disagree for \(predicate)\nSQL:    \(fromSQL.count)\nmemory: \(fromMemory.count)")
            }
            var renderer = PredicateFormatRenderer(seed: seed &+ UInt64(n))
            let format = renderer.render(predicate)
            let parsed = try ObjectPredicate(format: format, argumentArray: renderer.arguments)
            let parsedSQL = try sql.performAndWait { try sql.fetch(FetchRequest<ManagedObject>(entityName: "Sample", predicate: parsed)).map(render) }.sorted()
            XCTAssertEqual(parsedSQL, fromSQL, "seed \(seed), case \(n): the format \(format) selects other rows than \(predicate)")
            if fromSQL.count > 0 && fromSQL.count < rows.count { nonTrivial += 1 }
        }
        XCTAssertGreaterThan(nonTrivial, 60, "the generator must produce selective comparisons")
    }
}
