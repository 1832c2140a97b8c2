import AmbarStack
import Foundation
import XCTest

final class ChangeDetectorTests: StoreTestCase {
    func testDetectsCommitsOfOtherConnectionsOnly() throws {
        let detector = try XCTUnwrap(try coordinator.makeChangeDetector())
        XCTAssertFalse(try detector.hasChanged(), "the first look only records the version")
        XCTAssertFalse(try detector.hasChanged())
        _ = try seedEmployee("A")
        XCTAssertTrue(try detector.hasChanged(), "a commit through a coordinator of this process")
        XCTAssertFalse(try detector.hasChanged())
        let other = try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file()))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: other)
        try context.performAndWait {
            try context.fetch(FetchRequest<Employee>())[0].salary = 3
            try context.save()
        }
        XCTAssertTrue(try detector.hasChanged())
        XCTAssertNil(try PersistentStoreCoordinator(model: model, store: .inMemory).makeChangeDetector())
    }
}
