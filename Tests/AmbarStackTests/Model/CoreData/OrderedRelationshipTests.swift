import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Ordered to-many relationships (Core Data's `ordered="YES"`): the order is stored and kept
/// through saves, child contexts, merges and another process, one-to-many and many-to-many.
final class OrderedRelationshipTests: XCTestCase {
    var fixtures: URL { Repository.fixtures }
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory = nil }

    private func openLibrary() throws -> DataStack {
        try DataStack.open(model: .named("Library", directory: fixtures), storeURL: directory.url, name: "library")
    }

    private func titles(_ objects: [ManagedObject]) throws -> [String] {
        try objects.map { object in
            guard case .string(let title) = try object.value(forKey: "title") else { return "?" }
            return title
        }
    }

    /// A series with volumes inserted in the order given.
    private func makeSeries(_ stack: DataStack, _ names: [String]) throws -> ManagedObjectID {
        let context = try stack.importerContext()
        return try context.performAndWait { () throws -> ManagedObjectID in
            let series = try context.insertObject(entityName: "Series")
            try series.setValue("Dune", forKey: "name")
            for name in names {
                let book = try context.insertObject(entityName: "Book")
                try book.setValue(name, forKey: "title")
                try series.addObject(book, toKey: "volumes")
            }
            try context.save()
            return series.objectID
        }
    }

    func testOneToManyKeepsItsOrderThroughSavesAndEdits() throws {
        let stack = try openLibrary()
        // Primary keys follow insertion; the order deliberately does not.
        let id = try makeSeries(stack, ["Children", "Dune", "Messiah", "Emperor"])
        let context = try stack.importerContext()
        try context.performAndWait { () throws in
            let series = try context.existingObject(with: id)
            XCTAssertEqual(try titles(try series.orderedObjects(forKey: "volumes")), ["Children", "Dune", "Messiah", "Emperor"])
            try series.moveObject(at: 0, to: 2, inOrderedKey: "volumes")
            let heretics = try context.insertObject(entityName: "Book")
            try heretics.setValue("Heretics", forKey: "title")
            try series.insertObject(heretics, at: 1, inOrderedKey: "volumes")
            let chapterhouse = try context.insertObject(entityName: "Book")
            try chapterhouse.setValue("Chapterhouse", forKey: "title")
            try chapterhouse.setObject(series, forKey: "series")  // the inverse appends
            try series.removeObject(at: 0, fromOrderedKey: "volumes")
            XCTAssertEqual(try titles(try series.orderedObjects(forKey: "volumes")), ["Heretics", "Messiah", "Children", "Emperor", "Chapterhouse"])
            try context.save()
        }
        let reader = try stack.temporaryContext()
        try reader.performAndWait { () throws in
            let series = try reader.existingObject(with: id)
            XCTAssertEqual(
                try titles(try series.orderedObjects(forKey: "volumes")), ["Heretics", "Messiah", "Children", "Emperor", "Chapterhouse"], "as stored")
            XCTAssertEqual(try series.objects(forKey: "volumes").count, 5, "the set API sees the same objects")
        }
    }

    func testManyToManyOrderThroughAChildContextAndSetOrderedObjects() throws {
        let stack = try openLibrary()
        let parent = try stack.importerContext()
        let authorID = try parent.performAndWait { () throws -> ManagedObjectID in
            let author = try parent.insertObject(entityName: "Author")
            try author.setValue("Reader", forKey: "name")
            var books: [ManagedObject] = []
            for title in ["A", "B", "C"] {
                let book = try parent.insertObject(entityName: "Book")
                try book.setValue(title, forKey: "title")
                books.append(book)
            }
            try author.setOrderedObjects([books[2], books[0], books[1]], forKey: "favourites")
            try parent.save()
            return author.objectID
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        try child.performAndWait { () throws in
            let author = try child.existingObject(with: authorID)
            XCTAssertEqual(try titles(try author.orderedObjects(forKey: "favourites")), ["C", "A", "B"], "from the parent")
            try author.moveObject(at: 2, to: 0, inOrderedKey: "favourites")
            try child.save()
        }
        try parent.performAndWait { () throws in
            let author = try parent.existingObject(with: authorID)
            XCTAssertEqual(try titles(try author.orderedObjects(forKey: "favourites")), ["B", "C", "A"], "pushed into the parent")
            XCTAssertTrue(author.hasChanges)
            try parent.save()
        }
        let reader = try stack.temporaryContext()
        try reader.performAndWait { () throws in
            let author = try reader.existingObject(with: authorID)
            XCTAssertEqual(try titles(try author.orderedObjects(forKey: "favourites")), ["B", "C", "A"])
            let book = try XCTUnwrap(try author.orderedObjects(forKey: "favourites").first)
            XCTAssertEqual(try book.objects(forKey: "fans").map(\.objectID), [authorID], "the inverse")
            XCTAssertThrowsError(try author.orderedObjects(forKey: "books"), "books is not ordered")
            XCTAssertThrowsError(try author.moveObject(at: 0, to: 9, inOrderedKey: "favourites"))
        }
    }

    func testAnotherProcessReadsAndChangesTheOrder() throws {
        let stack = try openLibrary()
        let id = try makeSeries(stack, ["One", "Two", "Three"])
        let viewer = try stack.mainContext
        let helper = try OpenerProcess(model: fixtures.appendingPathComponent("Library.xcdatamodeld"), store: try XCTUnwrap(stack.storeURL))
        XCTAssertTrue(helper.line().hasPrefix("opened"))
        let uris = try helper.send("ordered \(id.uriString) volumes").split(separator: " ").map(String.init)
        let expected = try viewer.performAndWait { () throws -> [String] in
            try viewer.existingObject(with: id).orderedObjects(forKey: "volumes").map(\.objectID.uriString)
        }
        XCTAssertEqual(uris, expected, "the other process reads the same order")
        let before = try XCTUnwrap(try stack.mainCoordinator.history(after: 0).last?.token)
        XCTAssertEqual(try helper.send("move \(id.uriString) volumes 2 0"), "ok")
        // The other process's transaction, merged the way SharedStoreSync merges one.
        let transaction = try XCTUnwrap(try stack.mainCoordinator.history(after: before).first)
        XCTAssertEqual(transaction.updated, [id])
        XCTAssertEqual(transaction.updatedProperties[id], ["volumes"])
        try viewer.performAndWait { () throws in
            _ = viewer.mergeChanges(
                fromContextDidSave: DidSaveNotification(
                    inserted: transaction.inserted, updated: transaction.updated, deleted: transaction.deleted, token: transaction.token))
            let series = try viewer.existingObject(with: id)
            XCTAssertEqual(try titles(try series.orderedObjects(forKey: "volumes")), ["Three", "One", "Two"], "the other process's move, merged")
        }
        _ = try helper.send("quit")
    }
}
