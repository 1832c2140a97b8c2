import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Relationships through the CLI: `import` sets them by the related objects' keys (`--relate`)
/// or URIs, a reference to nothing is an error of its line, `fetch --json` prints them as URIs
/// or (`--relations`) keys, and an export → import round trip reproduces the graph.
final class ImportRelationshipsTests: AgentTestCase {
    /// Authors write books; books have tags; people have a manager (a relationship to the same entity).
    private func libraryModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Author", properties: [.attribute("uid", .string), .attribute("name", .string, optional: true), .toMany("books", "Book", inverse: "author")],
                uniquenessConstraints: [["uid"]]),
            EntityDescription(
                "Book",
                properties: [
                    .attribute("uid", .string), .attribute("title", .string, optional: true), .toOne("author", "Author", inverse: "books"),
                    .toMany("tags", "Tag", inverse: "books"),
                ], uniquenessConstraints: [["uid"]]),
            EntityDescription("Tag", properties: [.attribute("name", .string), .toMany("books", "Book", inverse: "tags")], uniquenessConstraints: [["name"]]),
            EntityDescription(
                "Person",
                properties: [.attribute("uid", .string), .toOne("manager", "Person", inverse: "reports"), .toMany("reports", "Person", inverse: "manager")],
                uniquenessConstraints: [["uid"]]),
        ])
    }

    private func file(_ lines: [String]) throws -> String {
        let url = directory.url.appendingPathComponent("in-\(UUID().uuidString.prefix(6)).ndjson")
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    private func importing(_ entity: String, _ key: String, _ lines: [String], _ extra: [String] = [], into dir: URL? = nil) throws -> (
        status: Int32, output: String, error: String
    ) {
        try agent(["import", "--directory", (dir ?? directory.url).path, "--entity", entity, "--key", key] + extra + [try file(lines)])
    }

    private func fetched(_ entity: String, _ extra: [String] = [], in dir: URL? = nil) throws -> [[String: Any]] {
        let result = try agent(["fetch", "--directory", (dir ?? directory.url).path, "--entity", entity, "--json"] + extra)
        XCTAssertEqual(result.status, 0, result.error)
        return try result.output.split(separator: "\n").map { try json($0) }
    }

    private func seedLibrary() throws {
        try initStore(try libraryModel())
        XCTAssertEqual(try importing("Author", "uid", [#"{"uid":"a1","name":"Ann"}"#, #"{"uid":"a2","name":"Bob"}"#]).status, 0)
        XCTAssertEqual(try importing("Tag", "name", [#"{"name":"x"}"#, #"{"name":"y"}"#]).status, 0)
        let books = try importing(
            "Book", "uid",
            [
                #"{"uid":"b1","title":"One","author":"a1","tags":["x","y"]}"#, #"{"uid":"b2","title":"Two","author":"a2","tags":[]}"#,
                #"{"uid":"b3","title":"Three","author":null}"#,
            ], ["--relate", "author=uid", "--relate", "tags=name", "--json"])
        XCTAssertEqual(books.status, 0, books.error)
        let report = try json(books.output)
        XCTAssertEqual(report["inserted"] as? Int, 3)
        XCTAssertEqual(report["updated"] as? Int, 0, "authors and tags changed through the inverse are not counted as books")
    }

    func testImportSetsRelationshipsByKeyAndFetchPrintsThemAsURIsOrKeys() throws {
        try seedLibrary()
        let books = Dictionary(uniqueKeysWithValues: try fetched("Book", ["--relations", "author=uid,tags=name"]).map { ($0["uid"] as? String ?? "", $0) })
        XCTAssertEqual(books["b1"]?["author"] as? String, "a1")
        XCTAssertEqual(books["b1"]?["tags"] as? [String], ["x", "y"])
        XCTAssertEqual(books["b2"]?["tags"] as? [String], [])
        XCTAssertTrue(books["b3"]?["author"] is NSNull)
        let authors = Dictionary(uniqueKeysWithValues: try fetched("Author", ["--relations", "books=uid"]).map { ($0["uid"] as? String ?? "", $0) })
        XCTAssertEqual(authors["a1"]?["books"] as? [String], ["b1"], "the inverse was set")

        // Without --relations: URIs, which import reads back in the same store.
        let plain = try fetched("Book")
        let b1 = try XCTUnwrap(plain.first { $0["uid"] as? String == "b1" })
        let annURI = try XCTUnwrap(b1["author"] as? String)
        XCTAssertTrue(annURI.hasPrefix("ambar://") && annURI.contains("/Author/p"), annURI)
        let moved = try importing("Book", "uid", [#"{"uid":"b2","author":"\#(annURI)"}"#])
        XCTAssertEqual(moved.status, 0, moved.error)
        let after = try fetched("Author", ["--relations", "books=uid"])
        XCTAssertEqual(Set(after.first { $0["uid"] as? String == "a1" }?["books"] as? [String] ?? []), ["b1", "b2"])
        XCTAssertEqual(after.first { $0["uid"] as? String == "a2" }?["books"] as? [String], [])
    }

    func testAReferenceToNothingIsAnErrorOfItsLineAndWritesNothingOfTheBatch() throws {
        try seedLibrary()
        let missing = try importing("Book", "uid", [#"{"uid":"b4","author":"a1"}"#, #"{"uid":"b5","author":"zz"}"#], ["--relate", "author=uid"])
        XCTAssertEqual(missing.status, 65)
        XCTAssertTrue(missing.error.contains(#"line 2: field "author": no Author has uid "zz""#), missing.error)
        XCTAssertNil(try fetched("Book").first { $0["uid"] as? String == "b4" }, "nothing of the failing batch is written")

        let notURI = try importing("Book", "uid", [#"{"uid":"b4","author":"a1"}"#])
        XCTAssertEqual(notURI.status, 65)
        XCTAssertTrue(notURI.error.contains("expected Author object URIs") && notURI.error.contains("--relate author=KEY"), notURI.error)

        let foreign = try importing("Book", "uid", [#"{"uid":"b4","author":"ambar://\#(UUID().uuidString)/Author/p1"}"#])
        XCTAssertEqual(foreign.status, 65)
        XCTAssertTrue(foreign.error.contains("an object of another store"), foreign.error)

        let tagURI = try XCTUnwrap(try fetched("Tag").first?["id"] as? String)
        let wrongEntity = try importing("Book", "uid", [#"{"uid":"b4","author":"\#(tagURI)"}"#])
        XCTAssertEqual(wrongEntity.status, 65)
        XCTAssertTrue(wrongEntity.error.contains("is Tag, not Author"), wrongEntity.error)

        let malformed = try importing("Book", "uid", [#"{"uid":"b4","author":"ambar://nothing"}"#])
        XCTAssertEqual(malformed.status, 65)
        XCTAssertTrue(malformed.error.contains("Invalid object ID") && malformed.error.contains("ambar://nothing"), malformed.error)

        let notArray = try importing("Book", "uid", [#"{"uid":"b4","tags":"x"}"#], ["--relate", "tags=name"])
        XCTAssertEqual(notArray.status, 65)
        XCTAssertTrue(notArray.error.contains(#"field "tags": is a to-many relationship: expected an array"#), notArray.error)

        let badKey = try importing("Book", "uid", [#"{"uid":"b4"}"#], ["--relate", "author=nope"])
        XCTAssertNotEqual(badKey.status, 0)
        XCTAssertTrue(badKey.error.contains(#"Author has no attribute "nope""#), badKey.error)

        let skipped = try importing(
            "Book", "uid", [#"{"uid":"b4","author":"a1"}"#, #"{"uid":"b5","author":"zz"}"#], ["--relate", "author=uid", "--on-error", "skip", "--json"])
        XCTAssertEqual(skipped.status, 0, skipped.error)
        XCTAssertEqual(try json(skipped.output)["inserted"] as? Int, 1, "with --on-error skip the good line is imported")
    }

    func testALineMayNameAnObjectAnotherLineOfTheBatchMakes() throws {
        try initStore(try libraryModel())
        let people = try importing(
            "Person", "uid", [#"{"uid":"p2","manager":"p1"}"#, #"{"uid":"p1","manager":null}"#, #"{"uid":"p3","manager":"p1"}"#],
            ["--relate", "manager=uid"])
        XCTAssertEqual(people.status, 0, people.error)
        let byUID = Dictionary(
            uniqueKeysWithValues: try fetched("Person", ["--relations", "manager=uid,reports=uid"]).map { ($0["uid"] as? String ?? "", $0) })
        XCTAssertEqual(byUID["p2"]?["manager"] as? String, "p1")
        XCTAssertEqual(byUID["p1"]?["reports"] as? [String], ["p2", "p3"])
    }

    /// `--missing wait`: a line naming an object a later line makes (in a later batch, or only
    /// after another waiting line) waits and is imported after the rest of the file; a line whose
    /// object no line makes is an error of its line then, and every other line is written.
    func testWithMissingWaitALineWaitsForALaterLineOfTheFile() throws {
        try initStore(try libraryModel())
        // Batches of 2: p4 names p3 (batch 2), p3 names p2 (batch 2, after it), p2 names p1 (batch 3).
        let chain = [
            #"{"uid":"p4","manager":"p3"}"#, #"{"uid":"p0","manager":null}"#, #"{"uid":"p3","manager":"p2"}"#, #"{"uid":"p2","manager":"p1"}"#,
            #"{"uid":"p1","manager":"p0"}"#,
        ]
        let refused = try importing("Person", "uid", chain, ["--relate", "manager=uid", "--batch-size", "2"])
        XCTAssertEqual(refused.status, 65, "without --missing wait, line 1 names an object that does not exist yet")
        XCTAssertTrue(refused.error.contains("line 1") && refused.error.contains("\"p3\""), refused.error)
        XCTAssertTrue(try fetched("Person").isEmpty, "nothing of the first batch was written")

        let waited = try importing("Person", "uid", chain, ["--relate", "manager=uid", "--batch-size", "2", "--missing", "wait", "--json"])
        XCTAssertEqual(waited.status, 0, waited.error)
        XCTAssertEqual(try json(waited.output)["inserted"] as? Int, 5)
        let managers = Dictionary(
            uniqueKeysWithValues: try fetched("Person", ["--relations", "manager=uid"]).map { ($0["uid"] as? String ?? "", $0["manager"] as? String ?? "-") })
        XCTAssertEqual(managers, ["p0": "-", "p1": "p0", "p2": "p1", "p3": "p2", "p4": "p3"])

        // A line whose object no line makes: its error, after every other line is written.
        let orphan = try importing(
            "Person", "uid", [#"{"uid":"q1","manager":"nobody"}"#, #"{"uid":"q2","manager":"q3"}"#, #"{"uid":"q3","manager":"p0"}"#],
            ["--relate", "manager=uid", "--missing", "wait"])
        XCTAssertEqual(orphan.status, 65)
        XCTAssertTrue(orphan.error.contains("line 1") && orphan.error.contains("\"nobody\"") && orphan.error.contains("every other line"), orphan.error)
        let uids = Set(try fetched("Person").compactMap { $0["uid"] as? String })
        XCTAssertTrue(uids.isSuperset(of: ["q2", "q3"]) && !uids.contains("q1"), "\(uids)")

        // With --on-error skip it is reported and the import succeeds.
        let skipped = try importing(
            "Person", "uid", [#"{"uid":"r1","manager":"nobody"}"#, #"{"uid":"r2","manager":"p0"}"#],
            ["--relate", "manager=uid", "--missing", "wait", "--on-error", "skip", "--json"])
        XCTAssertEqual(skipped.status, 0, skipped.error)
        XCTAssertEqual(try json(skipped.output)["skipped"] as? Int, 1)
        XCTAssertEqual(try agent(["import", "--directory", directory.url.path, "--entity", "Person", "--missing", "later", try file([])]).status, 64)
    }

    func testAnExportImportedIntoAnotherStoreReproducesTheGraph() throws {
        try seedLibrary()
        let export = { (entity: String, relations: String) -> [String] in
            try self.agent(["fetch", "--directory", self.directory.url.path, "--entity", entity, "--json", "--relations", relations]).output
                .split(separator: "\n").map(String.init)
        }
        let authors = try export("Author", "books=uid")
        let tags = try export("Tag", "books=uid")
        let books = try export("Book", "author=uid,tags=name")

        let other = directory.url.appendingPathComponent("copy")
        let modelFile = directory.url.appendingPathComponent("copy-model.json")
        try JSONEncoder().encode(try libraryModel()).write(to: modelFile)
        XCTAssertEqual(try agent(["init", "--model", modelFile.path, "--directory", other.path]).status, 0)
        // Destinations first; the to-many sides are set through their inverses.
        for (entity, key, lines, extra) in [
            ("Author", "uid", authors, ["--ignore", "books"]), ("Tag", "name", tags, ["--ignore", "books"]),
            ("Book", "uid", books, ["--relate", "author=uid,tags=name"]),
        ] {
            let result = try importing(entity, key, lines, extra, into: other)
            XCTAssertEqual(result.status, 0, "\(entity): \(result.error)")
        }
        for (entity, relations) in [("Author", "books=uid"), ("Tag", "books=uid"), ("Book", "author=uid,tags=name")] {
            func graph(_ dir: URL) throws -> Set<String> {
                Set(
                    try fetched(entity, ["--relations", relations], in: dir).map { object in
                        var object = object
                        object["id"] = nil
                        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
                    })
            }
            let original = try graph(directory.url)
            XCTAssertFalse(original.isEmpty)
            XCTAssertEqual(try graph(other), original, entity)
        }
    }
}
