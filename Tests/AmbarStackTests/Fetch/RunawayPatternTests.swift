import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `MATCHES` with a pattern that backtracks without bound (`(a+)+b` over a run of `a`s: each
/// more `a` doubles the work, and 40 of them take ICU days) is refused with an invalid predicate
/// that says why, in the store's SQL and in memory alike, instead of holding its thread; an
/// ordinary pattern over a long value still matches.
final class RunawayPatternTests: StoreTestCase {
    override class var runsOnPostgreSQL: Bool { true }

    private let runaway = "uid MATCHES '(a+)+b'"

    /// A context over a saved store with `uid`s: two runs of 40 `a`s, one that matches, and one
    /// long ordinary value.
    private func savedContext() throws -> ManagedObjectContext {
        let model = try ManagedObjectModel(entities: [EntityDescription("Tag", properties: [.attribute("uid", .string)])])
        let context = ManagedObjectContext(
            concurrencyType: .privateQueue, coordinator: try PersistentStoreCoordinator(model: model, store: try store("runaway.sqlite")))
        try context.performAndWait {
            for uid in [String(repeating: "a", count: 40), String(repeating: "a", count: 40) + "c", "aab", String(repeating: "x", count: 100_000)] {
                try context.insertObject(entityName: "Tag").setValue(.string(uid), forKey: "uid")
            }
            try context.save()
        }
        return context
    }

    private func count(_ format: String, in context: ManagedObjectContext) throws -> Int {
        try context.performAndWait { try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag", predicate: try ObjectPredicate(format: format))).count }
    }

    private func assertRefusedAsRunaway(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard case .invalidPredicate(let reason)? = error as? AmbarError else {
                return XCTFail("expected an invalid predicate, got \(error)", file: file, line: line)
            }
            XCTAssertTrue(reason.contains("MATCHES gave up on a value of 4") && reason.contains("characters after 100 ms"), reason, file: file, line: line)
            XCTAssertTrue(reason.contains("'(a+)+b' backtracks without bound"), reason, file: file, line: line)
        }
    }

    func testARunawayPatternIsRefusedByTheStoresQuery() throws {
        let context = try savedContext()
        assertRefusedAsRunaway { _ = try count(runaway, in: context) }
        // Refused, not broken: the same context fetches with other patterns afterwards.
        XCTAssertEqual(try count("uid MATCHES 'a+b'", in: context), 1)
        XCTAssertEqual(try count("uid MATCHES 'x*'", in: context), 1, "a long value matches an ordinary pattern")
        XCTAssertEqual(try count("uid LIKE '*a*a*b'", in: context), 1, "LIKE has no runaway: its cost is bounded by the lengths")
    }

    func testARunawayPatternIsRefusedInMemory() throws {
        let context = try savedContext()
        let predicate = try ObjectPredicate(format: runaway)
        try context.performAndWait {
            let tags = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag", predicate: try ObjectPredicate(format: "uid BEGINSWITH 'aaaa'")))
            XCTAssertEqual(tags.count, 2)
            for tag in tags { assertRefusedAsRunaway { _ = try predicate.evaluate(with: tag) } }
            let short = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag", predicate: try ObjectPredicate(format: "uid == 'aab'")))
            XCTAssertEqual(try short.map { try predicate.evaluate(with: $0) }, [true], "a short value is decided")
        }
    }
}
