import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// `sync-agent fetch`: a store's objects selected by an NSPredicate format string, as text or
/// JSON lines, through the built binary.
final class FetchCommandTests: AgentTestCase {
    var libraryModel: URL {
        Repository.fixtures.appendingPathComponent("Library.xcdatamodeld")
    }

    /// A store made from the Core Data model, filled through a stack of this process.
    private func makeLibrary() throws {
        let created = try agent(["init", "--model", libraryModel.path, "--directory", directory.url.path])
        XCTAssertEqual(created.status, 0, created.error)
        let stack = try DataStack.open(model: .model(try PersistentStoreCoordinator.storedModel(at: store)), storeURL: store, name: "fill")
        let context = try stack.importerContext()
        try context.performAndWait { () throws in
            for (name, books) in [
                ("Le Guin", [("Earthsea", 200), ("The Dispossessed", 387), ("The Left Hand of Darkness", 304)]), ("Herbert", [("Dune", 612)]),
            ] {
                let author = try context.insertObject(entityName: "Author")
                try author.setValue(name, forKey: "name")
                for (title, pages) in books {
                    let book = try context.insertObject(entityName: "Book")
                    try book.setValue(title, forKey: "title")
                    try book.setValue(pages, forKey: "pages")
                    try book.setObject(author, forKey: "author")
                    if title == "Dune" {
                        try book.setValue(Data([1, 2, 3]), forKey: "cover")
                        try book.setValue(Date(timeIntervalSince1970: -139_881_600), forKey: "published")
                    }
                }
            }
            try context.save()
        }
    }

    func testJSONLinesHoldTheIDAndEveryAttribute() throws {
        try makeLibrary()
        let result = try agent(["fetch", "--directory", directory.url.path, "--entity", "Book", "--predicate", "author.name ==[c] 'herbert'", "--json"])
        XCTAssertEqual(result.status, 0, result.error)
        let lines = result.output.split(separator: "\n")
        XCTAssertEqual(lines.count, 1)
        let dune = try json(lines[0])
        XCTAssertTrue((dune["id"] as? String)?.hasPrefix("ambar://") == true && (dune["id"] as? String)?.contains("/Book/p") == true, "\(dune)")
        XCTAssertEqual(dune["title"] as? String, "Dune")
        XCTAssertEqual(dune["pages"] as? Int, 612)
        XCTAssertEqual(dune["cover"] as? String, "AQID", "binary as base64")
        XCTAssertEqual(dune["published"] as? String, "1965-07-27T00:00:00Z", "dates as ISO 8601")
        XCTAssertEqual(dune["isOwned"] as? Bool, true, "the model's default")
        XCTAssertTrue(dune["rating"] != nil && dune.keys.contains("isRead"), "every attribute by name: \(dune.keys.sorted())")
    }

    func testPredicatesSortsAndLimits() throws {
        try makeLibrary()
        func titles(_ arguments: [String]) throws -> [String] {
            let result = try agent(["fetch", "--directory", directory.url.path, "--json"] + arguments)
            XCTAssertEqual(result.status, 0, result.error)
            return try result.output.split(separator: "\n").map { try json($0)["title"] as? String ?? "?" }
        }
        XCTAssertEqual(
            try titles(["--entity", "Book", "--predicate", "pages > 300 AND author.name BEGINSWITH 'Le'", "--sort", "pages:desc"]),
            ["The Dispossessed", "The Left Hand of Darkness"])
        XCTAssertEqual(try titles(["--entity", "Book", "--sort", "title", "--limit", "2"]), ["Dune", "Earthsea"])
        XCTAssertEqual(
            try titles(["--entity", "Book", "--predicate", "title MATCHES '.*Dark.*' OR title LIKE 'E*'", "--sort", "title"]),
            ["Earthsea", "The Left Hand of Darkness"])
        let authors = try agent(["fetch", "--directory", directory.url.path, "--entity", "Author", "--predicate", "ANY books.pages > 600", "--json"])
        XCTAssertEqual(try authors.output.split(separator: "\n").map { try json($0)["name"] as? String }, ["Herbert"])
        let counted = try agent([
            "fetch", "--directory", directory.url.path, "--entity", "Author", "--predicate", "books.@count == 3 AND books.@sum.pages > 800",
        ])
        XCTAssertEqual(counted.status, 0, counted.error)
        XCTAssertTrue(counted.output.contains("name=\"Le Guin\""), counted.output)
        XCTAssertEqual(counted.output.split(separator: "\n").count, 1)
    }

    func testABadFormatIsExit65WithTheMessageAndAnUnknownEntity64() throws {
        try makeLibrary()
        let bad = try agent(["fetch", "--directory", directory.url.path, "--entity", "Book", "--predicate", "title BEGINS 'E'"])
        XCTAssertEqual(bad.status, 65)
        XCTAssertTrue(bad.error.contains("position 6") && bad.error.contains("title BEGINS 'E'") && bad.error.contains("^"), bad.error)
        XCTAssertEqual(bad.output, "", "nothing is printed")
        let unknownKey = try agent(["fetch", "--directory", directory.url.path, "--entity", "Book", "--predicate", "nope == 1"])
        XCTAssertEqual(unknownKey.status, 65)
        XCTAssertTrue(unknownKey.error.contains("nope"), unknownKey.error)
        let transient = try agent(["fetch", "--directory", directory.url.path, "--entity", "Author", "--predicate", "draftNote == 'x'"])
        XCTAssertEqual(transient.status, 65)
        XCTAssertTrue(transient.error.contains("transient"), transient.error)
        let entity = try agent(["fetch", "--directory", directory.url.path, "--entity", "Nope"])
        XCTAssertEqual(entity.status, 64)
        XCTAssertTrue(entity.error.contains("Author, Book"), entity.error)
    }
}
