import AmbarStack
import Foundation
import Synchronization
import XCTest

/// How long objects and their contexts live: an object does not keep its context alive, and a
/// fetch that fails part-way keeps none of the objects it had made.
final class ObjectLifetimeTests: StoreTestCase {
    /// An entity whose objects count how many of them were made and freed.
    final class CountedTag: ManagedObject {
        static let made = Atomic<Int>(0)
        static let freed = Atomic<Int>(0)
        override class var entityName: String { "CountedTag" }

        required init(_ token: ManagedObjectInitToken) {
            super.init(token)
            Self.made.add(1, ordering: .relaxed)
        }

        deinit { Self.freed.add(1, ordering: .relaxed) }
    }

    private func taggedCoordinator(_ uids: [String]) throws -> PersistentStoreCoordinator {
        let model = try ManagedObjectModel(
            entities: [EntityDescription("CountedTag", properties: [.attribute("uid", .string)])], classes: [CountedTag.self])
        let coordinator = try PersistentStoreCoordinator(model: model, store: try store("tags.sqlite"))
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "writer")
        try writer.performAndWait {
            for uid in uids { try writer.insertObject(entityName: "CountedTag").setValue(.string(uid), forKey: "uid") }
            try writer.save()
        }
        return coordinator
    }

    func testAnObjectDoesNotKeepItsContextAliveAndReadsNilOnceItIsGone() throws {
        let coordinator = try taggedCoordinator(["a", "b"])
        weak var gone: ManagedObjectContext?
        let tags: [ManagedObject] = try {
            let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "reader")
            gone = reader
            let tags = try reader.performAndWait { try reader.fetch(FetchRequest<ManagedObject>(entityName: "CountedTag")) }
            XCTAssertEqual(tags.count, 2)
            XCTAssertTrue(tags.allSatisfy { $0.managedObjectContext === reader })
            return tags
        }()
        XCTAssertNil(gone, "the fetched objects kept their context alive")
        for tag in tags { XCTAssertNil(tag.managedObjectContext) }
    }

    /// `MATCHES '(a+)+b'` gives up on a run of `a`s (``RunawayPatternTests``): the fetch fails at
    /// the last row, after the rows before it (`aab`, which match) were made into objects. A
    /// store hands rows over block by block (``RowValueBlock``, 512 values), so more rows than a
    /// block holds come first.
    func testAFetchThatFailsPartWayKeepsNoObjectItMade() throws {
        let coordinator = try taggedCoordinator(Array(repeating: "aab", count: 600) + [String(repeating: "a", count: 40)])
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "reader")
        let before = (made: CountedTag.made.load(ordering: .relaxed), freed: CountedTag.freed.load(ordering: .relaxed))
        try reader.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "CountedTag", predicate: try ObjectPredicate(format: "uid MATCHES '(a+)+b'"))
            XCTAssertThrowsError(try reader.fetch(request)) { error in
                guard case .invalidPredicate? = error as? AmbarError else { return XCTFail("expected an invalid predicate, got \(error)") }
            }
            XCTAssertEqual(reader.registeredObjectCount, 0, "a failed fetch registered objects")
        }
        let made = CountedTag.made.load(ordering: .relaxed) - before.made
        XCTAssertGreaterThan(made, 0, "the fetch made no object before the row that failed, so this test checks nothing")
        XCTAssertEqual(CountedTag.freed.load(ordering: .relaxed) - before.freed, made, "an object the failed fetch made is still alive")
        // The context fetches as before afterwards.
        let found = try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "CountedTag", predicate: try ObjectPredicate(format: "uid == 'aab'"))).count
        }
        XCTAssertEqual(found, 600)
    }
    /// A new object not announced yet is set without its context being loaded: the checks that
    /// loading it made (the caller on its queue, the context still there) hold all the same.
    func testANewObjectRefusesSetsOffItsQueueAndAfterItsContextIsGone() throws {
        let coordinator = try taggedCoordinator([])
        var writer: ManagedObjectContext? = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator, name: "writer")
        let tag = try XCTUnwrap(writer).performAndWait { () throws -> ManagedObject in
            let context = try XCTUnwrap(writer)
            let tag = try context.insertObject(entityName: "CountedTag")
            try tag.setValue(.string("on the queue"), forKey: "uid")
            // Off the queue, on another thread, while the object is new and not announced (this
            // block still runs, waiting for that thread).
            let refused = offTheBlocksThread { () -> AmbarError? in
                do {
                    try tag.setValue(AttributeValue.string("off the queue"), forKey: "uid")
                    return nil
                } catch {
                    return error as? AmbarError
                }
            }
            if case .wrongQueue(let name, let operation)? = refused {
                XCTAssertEqual(name, "writer")
                XCTAssertEqual(operation, "setting CountedTag.uid")
            } else {
                XCTFail("expected wrongQueue, got \(String(describing: refused))")
            }
            XCTAssertEqual(try tag.value(forKey: "uid"), .string("on the queue"), "a refused set was applied")
            return tag
        }
        writer = nil
        XCTAssertNil(tag.managedObjectContext)
        XCTAssertThrowsError(try tag.setValue(AttributeValue.string("after"), forKey: "uid")) { error in
            guard case .foreignObject? = error as? AmbarError else { return XCTFail("expected foreignObject, got \(error)") }
        }
    }
}
