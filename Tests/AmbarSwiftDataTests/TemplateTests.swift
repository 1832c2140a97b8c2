import AmbarSwiftData
import Foundation
import XCTest

/// The code Xcode's SwiftData app template writes, run here.
final class TemplateTests: XCTestCase {
    func testTheTemplatesContainerAndItsItems() throws {
        let schema = Schema([Item.self])
        let modelConfiguration = ModelConfiguration(schema: schema, isStoredInMemoryOnly: true)
        let sharedModelContainer = try ModelContainer(for: schema, configurations: [modelConfiguration])
        let context = ModelContext(sharedModelContainer)
        let newItem = Item(timestamp: Date(timeIntervalSince1970: 1))
        let id: UUID = newItem.id  // the app's own `id`, not the persistent identifier
        context.insert(newItem)
        context.insert(Item(timestamp: Date(timeIntervalSince1970: 2)))
        try context.save()

        let items = try context.fetch(FetchDescriptor<Item>(sortBy: [SortDescriptor(\.timestamp, order: .reverse)]))
        XCTAssertEqual(items.map(\.timestamp.timeIntervalSince1970), [2, 1])
        XCTAssertEqual(items.last?.id, id)
        let found = try context.fetch(FetchDescriptor<Item>(predicate: #Predicate { $0.id == id }))
        XCTAssertTrue(found.first === newItem)

        for index in [0] { context.delete(items[index]) }
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Item>()), 1)
        try context.delete(model: Item.self)
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Item>()), 0)
    }
}
