import AmbarStack
import AmbarTestSupport
import Foundation
import GRDBSQLite
import XCTest

/// The Core Data model features real apps use, read from a model in Xcode's format (both XML
/// spellings) and exercised through a real store: transformable, transient, derived, compound and
/// relationship indexes, count limits, same-named properties on sibling sub-entities, Xcode's
/// default-value spellings.
final class CoreDataModelFeatureTests: XCTestCase {
    var fixtures: URL { Repository.fixtures }

    /// The store's directory, removed when the test ends.
    private var directory: TemporaryDirectory?

    override func tearDown() {
        directory = nil
        super.tearDown()
    }

    private func openLibrary() throws -> DataStack {
        let directory = try TemporaryDirectory()
        self.directory = directory
        return try DataStack.open(model: .named("Library", directory: fixtures), storeURL: directory.url, name: "library")
    }

    /// Rows of `sql` against the store file, read with a plain SQLite connection.
    private func query(_ stack: DataStack, _ sql: String) throws -> [[String]] {
        let path = try XCTUnwrap(stack.storeURL).path
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), path)
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil), SQLITE_OK)
        defer { sqlite3_close_v2(db) }
        var statement: OpaquePointer?
        XCTAssertEqual(sqlite3_prepare_v2(db, sql, -1, &statement, nil), SQLITE_OK, String(cString: sqlite3_errmsg(db)))
        defer { sqlite3_finalize(statement) }
        var rows: [[String]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(
                (0..<sqlite3_column_count(statement)).map { i in
                    sqlite3_column_text(statement, i).map { String(cString: $0) } ?? "NULL"
                })
        }
        return rows
    }

    func testEveryFeatureLoadsWithCoreDatasMeaning() throws {
        let model = try ModelSource.named("Library", directory: fixtures).load()
        let author = try XCTUnwrap(model.entity(named: "Author"))
        let book = try XCTUnwrap(model.entity(named: "Book"))
        let attribute = { (entity: EntityDescription, name: String) in entity.attributes.first { $0.name == name } }
        let relationship = { (entity: EntityDescription, name: String) in entity.relationships.first { $0.name == name } }

        XCTAssertEqual(attribute(author, "preferences")?.type, .transformable)
        XCTAssertEqual(attribute(author, "preferences")?.valueTransformerName, "PreferencesTransformer")
        XCTAssertEqual(attribute(author, "preferences")?.customClassName, "[String: String]")
        XCTAssertEqual(attribute(author, "draftNote")?.isTransient, true)
        XCTAssertEqual(attribute(author, "scratch")?.type, .undefined)
        XCTAssertEqual(attribute(author, "searchName")?.derivation, "canonical:(name)")
        XCTAssertEqual(relationship(author, "favourites")?.isOrdered, true)
        XCTAssertEqual(relationship(author, "favourites")?.maxCount, 3)
        XCTAssertEqual(relationship(author, "highlighted")?.isTransient, true)
        XCTAssertEqual(relationship(author, "highlighted")?.isToMany, false, "maxCount=\"1\" without toMany: the older to-one spelling")
        XCTAssertEqual(relationship(book, "author")?.isToMany, false)
        XCTAssertEqual(
            author.fetchedProperties,
            [
                FetchedPropertyDescription(name: "longBooks", entityName: "Book", predicateFormat: "author == $FETCH_SOURCE AND pages > 300"),
                FetchedPropertyDescription(
                    name: "titledBooks", entityName: "Book",
                    predicateFormat: "author == $FETCH_SOURCE AND title BEGINSWITH $FETCHED_PROPERTY.userInfo.prefix", userInfo: ["prefix": "Le Guin"]),
            ])
        XCTAssertEqual(attribute(author, "name")?.isIndexed, true, "a one-element fetch index")
        XCTAssertEqual(
            Set(book.indexes), [["title", "published"], ["author", "pages"], ["author"]],
            "<compoundIndexes>, a compound <fetchIndex>, a fetch index on a relationship")
        XCTAssertEqual(
            model.fetchRequestTemplates["UnreadBooks"],
            FetchRequestTemplate(name: "UnreadBooks", entityName: "Book", predicateFormat: "isRead == NO", fetchLimit: 10))

        // Defaults as Xcode writes them, read as Core Data reads them.
        XCTAssertEqual(attribute(book, "pages")?.defaultValue, .integer(0), "\"0.0\" on an integer")
        XCTAssertEqual(attribute(book, "copies")?.defaultValue, .integer(1), "YES on an integer")
        XCTAssertEqual(attribute(book, "isRead")?.defaultValue, .bool(false), "\"0.0\" on a boolean")
        XCTAssertEqual(attribute(book, "isOwned")?.defaultValue, .bool(true), "\"1\" on a boolean")
        XCTAssertEqual(attribute(book, "cover")?.defaultValue, .null, "\"\" on binary: no default")
        XCTAssertEqual(attribute(author, "selectionCount")?.defaultValue, .integer(0))
    }

    func testIndexesAndColumnsInTheSchema() throws {
        let stack = try openLibrary()
        let indexColumns = { (table: String) throws -> Set<[String]> in
            Set(
                try self.query(stack, "SELECT name FROM pragma_index_list('\(table)')").map { row in
                    try self.query(stack, "SELECT name FROM pragma_index_info('\(row[0])') ORDER BY seqno").map { $0[0] }
                })
        }
        let bookIndexes = try indexColumns("Book")
        XCTAssertTrue(bookIndexes.contains(["title", "published"]), "\(bookIndexes)")
        XCTAssertTrue(bookIndexes.contains(["author", "pages"]), "\(bookIndexes)")
        XCTAssertTrue(bookIndexes.contains(["author"]), "\(bookIndexes)")
        XCTAssertTrue(try indexColumns("Author").contains(["name"]))

        let authorColumns = Set(try query(stack, "SELECT name FROM pragma_table_info('Author')").map { $0[0] })
        XCTAssertTrue(
            authorColumns.isDisjoint(with: ["draftNote", "scratch", "selectionCount", "highlighted"]), "transient properties have no column: \(authorColumns)")
        XCTAssertTrue(authorColumns.isSuperset(of: ["name", "searchName", "preferences"]))
        // Sibling sub-entities: `title` agrees in type (one column), `length` does not (two).
        let mediaColumns = try query(stack, "SELECT name, type FROM pragma_table_info('Media')").map { "\($0[0]):\($0[1])" }
        XCTAssertEqual(mediaColumns.filter { $0.hasPrefix("title") }, ["title:TEXT"])
        XCTAssertEqual(Set(mediaColumns.filter { $0.hasPrefix("length") }), ["length:REAL", "length_Video:TEXT"])
    }

    func testSameNamedPropertiesOnSiblingSubentitiesKeepTheirOwnValues() throws {
        let stack = try openLibrary()
        let context = try stack.importerContext()
        try context.performAndWait { () throws in
            let podcast = try context.insertObject(entityName: "Podcast")
            try podcast.setValue("Episode 1", forKey: "title")
            try podcast.setValue(42.5, forKey: "length")
            let video = try context.insertObject(entityName: "Video")
            try video.setValue("Trailer", forKey: "title")
            try video.setValue("2 min", forKey: "length")
            try context.save()
        }
        let reader = try stack.temporaryContext()
        try reader.performAndWait { () throws in
            let podcasts = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Podcast", predicate: Key<Double>("length") > 40))
            XCTAssertEqual(try podcasts.map { try $0.value(forKey: "title") }, [.string("Episode 1")])
            let videos = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Video", predicate: Key<String>("length") == "2 min"))
            XCTAssertEqual(try videos.map { try $0.value(forKey: "title") }, [.string("Trailer")])
            let all = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Media"))
            XCTAssertEqual(Set(all.map(\.entityName)), ["Podcast", "Video"])
        }
    }

    func testTransformableValuesRoundTripThroughARegisteredTransformerAndAsRawData() throws {
        AttributeTransformers.register(JSONAttributeTransformer<[String: String]>(), named: "PreferencesTransformer")
        defer { AttributeTransformers.unregister(named: "PreferencesTransformer") }
        let stack = try openLibrary()
        let context = try stack.importerContext()
        let legacy = Data([0x62, 0x70, 0x6c, 0x69, 0x73, 0x74])  // an archive Ambar cannot decode
        try context.performAndWait { () throws in
            let author = try context.insertObject(entityName: "Author")
            try author.setValue("Ursula", forKey: "name")
            try author.setTransformedValue(["theme": "dark", "font": "serif"], forKey: "preferences")
            try author.setTransformedValue(legacy, forKey: "legacyBlob")
            XCTAssertThrowsError(try author.setTransformedValue(["not data"], forKey: "legacyBlob")) { error in
                guard case .transformationFailed(_, let property, let transformer, _, _) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertEqual(property, "legacyBlob")
                XCTAssertEqual(transformer, "NSSecureUnarchiveFromData")
            }
            try context.save()
        }
        let stored = try query(stack, "SELECT CAST(preferences AS TEXT), hex(legacyBlob) FROM Author")
        XCTAssertEqual(stored.first?[0], #"{"font":"serif","theme":"dark"}"#, "stored as the transformer's bytes")
        XCTAssertEqual(stored.first?[1], "62706C697374", "stored as given")
        let reader = try stack.temporaryContext()
        try reader.performAndWait { () throws in
            let author = try XCTUnwrap(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Author")).first)
            XCTAssertEqual(try author.transformedValue(forKey: "preferences", as: [String: String].self), ["theme": "dark", "font": "serif"])
            XCTAssertEqual(try author.transformedValue(forKey: "legacyBlob", as: Data.self), legacy, "no transformer registered: raw Data")
            XCTAssertThrowsError(try author.transformedValue(forKey: "preferences", as: [Int].self))
        }
        // A transformer that cannot decode the stored bytes: its own error is kept as the cause.
        AttributeTransformers.register(JSONAttributeTransformer<[String: Int]>(), named: "PreferencesTransformer")
        let strict = try stack.temporaryContext()
        try strict.performAndWait { () throws in
            let author = try XCTUnwrap(try strict.fetch(FetchRequest<ManagedObject>(entityName: "Author")).first)
            XCTAssertThrowsError(try author.transformedValue(forKey: "preferences", as: [String: Int].self)) { error in
                guard case .transformationFailed(_, "preferences", _, _, let cause) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertTrue(cause?.error is DecodingError, "the decoder's error, as thrown: \(String(describing: cause))")
                XCTAssertTrue((error as? AmbarError)?.underlyingError is DecodingError)
            }
        }
    }

    func testTransientValuesAreChangesButNeverReachTheStoreOrTheLedger() throws {
        let stack = try openLibrary()
        let context = try stack.importerContext()
        let coordinator = try stack.writerCoordinator
        let id = try context.performAndWait { () throws -> ManagedObjectID in
            let author = try context.insertObject(entityName: "Author")
            try author.setValue("Le Guin", forKey: "name")
            try context.save()
            return author.objectID
        }
        let tokenBefore = try coordinator.history(after: 0).last?.token ?? 0
        try context.performAndWait { () throws in
            let author = try context.existingObject(with: id)
            XCTAssertEqual(try author.value(forKey: "selectionCount"), .integer(0), "the transient's default")
            try author.setValue("half-written", forKey: "draftNote")
            try author.setValue(AttributeValue.integer(7), forKey: "scratch")
            XCTAssertTrue(author.hasChanges)
            XCTAssertEqual(author.changedValues()["draftNote"], .string("half-written"))
            try context.save()
            XCTAssertFalse(author.hasChanges, "committed in memory")
            XCTAssertEqual(try author.value(forKey: "draftNote"), .string("half-written"), "kept in memory after the save")
        }
        XCTAssertEqual(try coordinator.history(after: tokenBefore), [], "a transient-only change writes no transaction")
        try context.performAndWait { () throws in
            let author = try context.existingObject(with: id)
            try author.setValue("Ursula K. Le Guin", forKey: "name")
            try author.setValue("another draft", forKey: "draftNote")
            try context.save()
        }
        let changes = try coordinator.history(after: tokenBefore)
        XCTAssertEqual(changes.count, 1)
        XCTAssertFalse(changes.first?.updatedProperties[id]?.contains("draftNote") ?? true, "\(changes)")
        XCTAssertTrue(changes.first?.updatedProperties[id]?.contains("name") ?? false, "\(changes)")
        try context.performAndWait { () throws in
            let author = try context.existingObject(with: id)
            try context.refresh(author, mergeChanges: false)
            XCTAssertEqual(try author.value(forKey: "draftNote"), .null, "a fault starts transients over")
            XCTAssertEqual(try author.value(forKey: "name"), .string("Ursula K. Le Guin"))
        }
        let reader = try stack.temporaryContext()
        try reader.performAndWait { () throws in
            XCTAssertThrowsError(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Author", predicate: Key<String>("draftNote") == "x"))) { error in
                guard case .invalidPredicate(let message) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("transient"), message)
            }
        }
    }

    func testTransientRelationshipsLiveInMemoryOnly() throws {
        let stack = try openLibrary()
        let context = try stack.importerContext()
        let authorID = try context.performAndWait { () throws -> ManagedObjectID in
            let author = try context.insertObject(entityName: "Author")
            try author.setValue("Tolkien", forKey: "name")
            let book = try context.insertObject(entityName: "Book")
            try book.setObject(author, forKey: "author")
            try author.setObject(book, forKey: "highlighted")
            try context.save()
            XCTAssertEqual(try author.object(forKey: "highlighted"), book, "kept in memory")
            return author.objectID
        }
        let reader = try stack.temporaryContext()
        try reader.performAndWait { () throws in
            let author = try reader.existingObject(with: authorID)
            XCTAssertNil(try author.object(forKey: "highlighted"), "never stored")
            XCTAssertEqual(try author.objects(forKey: "books").count, 1)
        }
    }

    func testDerivedAttributesAreComputedAtSave() throws {
        let stack = try openLibrary()
        let context = try stack.importerContext()
        try context.performAndWait { () throws in
            let author = try context.insertObject(entityName: "Author")
            try author.setValue("Émile Zola", forKey: "name")
            for pages in [120, 480] {
                let book = try context.insertObject(entityName: "Book")
                try book.setValue(pages, forKey: "pages")
                try book.setObject(author, forKey: "author")
            }
            let before = Date()
            try context.save()
            XCTAssertEqual(try author.value(forKey: "searchName"), .string("emile zola"))
            XCTAssertEqual(try author.value(forKey: "bookCount"), .integer(2))
            XCTAssertEqual(try author.value(forKey: "totalPages"), .integer(600))
            guard case .date(let touched) = try author.value(forKey: "touchedAt") else { return XCTFail("now() sets a date") }
            XCTAssertGreaterThanOrEqual(touched, before.addingTimeInterval(-1))

            let book = try context.insertObject(entityName: "Book")
            try book.setValue(30, forKey: "pages")
            try book.setObject(author, forKey: "author")
            try author.setValue("Zola", forKey: "name")
            try context.save()
        }
        XCTAssertEqual(try query(stack, "SELECT searchName, bookCount, totalPages FROM Author"), [["zola", "3", "630"]], "stored as computed")
    }

    func testFetchRequestTemplatesSubstituteVariablesAndFetchedPropertiesEvaluateOnAccess() throws {
        let stack = try openLibrary()
        let context = try stack.importerContext()
        let model = try ModelSource.named("Library", directory: fixtures).load()
        try context.performAndWait { () throws in
            for (name, pages) in [("Le Guin", [120, 350, 420]), ("Herbert", [600])] {
                let author = try context.insertObject(entityName: "Author")
                try author.setValue(name, forKey: "name")
                for (n, count) in pages.enumerated() {
                    let book = try context.insertObject(entityName: "Book")
                    try book.setValue("\(name) \(n)", forKey: "title")
                    try book.setValue(count, forKey: "pages")
                    try book.setValue(n == 0, forKey: "isRead")
                    try book.setObject(author, forKey: "author")
                }
            }
            try context.save()

            var request = try model.fetchRequestTemplate(named: "BooksByAuthorName", substitutionVariables: ["NAME": "Le Guin", "MIN_PAGES": 300])
            request.sortDescriptors = [Key<String>("title").sorted()]
            XCTAssertEqual(try context.fetch(request).map { try $0.value(forKey: "title") }, [.string("Le Guin 1"), .string("Le Guin 2")])
            let unread = try model.fetchRequestTemplate(named: "UnreadBooks")
            XCTAssertEqual(unread.fetchLimit, 10)
            XCTAssertEqual(try context.count(for: unread), 2)
            XCTAssertThrowsError(try model.fetchRequestTemplate(named: "BooksByAuthorName", substitutionVariables: ["NAME": "x"])) { error in
                guard case .invalidPredicateFormat(_, _, let reason) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertTrue(reason.contains("$MIN_PAGES"), reason)
            }
            XCTAssertThrowsError(try model.fetchRequestTemplate(named: "Missing"))

            let leGuin = try XCTUnwrap(try context.fetch(FetchRequest<ManagedObject>(entityName: "Author", predicate: Key<String>("name") == "Le Guin")).first)
            XCTAssertEqual(Set(try context.fetchedProperty("longBooks", of: leGuin).map { try $0.value(forKey: "pages") }), [.integer(350), .integer(420)])
            let book = try context.insertObject(entityName: "Book")
            try book.setValue(999, forKey: "pages")
            try book.setObject(leGuin, forKey: "author")
            try context.save()
            XCTAssertEqual(try context.fetchedProperty("longBooks", of: leGuin).count, 3, "evaluated again on each access")
            XCTAssertThrowsError(try context.fetchedProperty("missing", of: leGuin))
            // $FETCHED_PROPERTY.userInfo.prefix is the property's <userInfo> entry.
            XCTAssertEqual(
                Set(try context.fetchedProperty("titledBooks", of: leGuin).map { try $0.value(forKey: "title") }),
                [.string("Le Guin 0"), .string("Le Guin 1"), .string("Le Guin 2")])
        }
    }

    /// Sort descriptors and `includesSubentities` of templates and fetched properties, as a JSON
    /// model gives them (Xcode's format has no place for sort descriptors), are applied; a sort
    /// key the entity does not have is refused when the model loads.
    func testTemplatesAndFetchedPropertiesKeepTheirOrder() throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("ordered.json")
        try #"""
        {"entities": [
          {"name": "Author", "attributes": [{"name": "name", "type": "string"}],
           "relationships": [{"name": "books", "destination": "Book", "inverse": "author", "toMany": true}],
           "fetchedProperties": [{"name": "byLength", "entityName": "Book", "predicateFormat": "author == $FETCH_SOURCE",
                                  "sortDescriptors": ["pages:desc", {"key": "title", "ascending": true}]},
                                 {"name": "tagged", "entityName": "Book", "predicateFormat": "author == $FETCH_SOURCE AND tag == $FETCHED_PROPERTY.userInfo.tag",
                                  "sortDescriptors": ["title"], "userInfo": {"tag": "x"}}]},
          {"name": "Book", "attributes": [{"name": "title", "type": "string"}, {"name": "pages", "type": "integer32"},
                                          {"name": "tag", "type": "string", "optional": true}],
           "relationships": [{"name": "author", "destination": "Author", "inverse": "books"}]},
          {"name": "Comic", "parent": "Book"}],
         "fetchRequests": [{"name": "Shortest", "entityName": "Book", "predicateFormat": "pages > $MIN", "fetchLimit": 2,
                            "sortDescriptors": [{"key": "pages"}, "title:desc"]},
                           {"name": "OnlyBooks", "entityName": "Book", "predicateFormat": "", "includesSubentities": false,
                            "sortDescriptors": ["author.name", "title"]}]}
        """#.write(to: file, atomically: true, encoding: .utf8)
        let model = try ModelFile.load(file)
        XCTAssertEqual(
            model.fetchRequestTemplates["Shortest"]?.sortDescriptors,
            [ObjectSortDescriptor(key: "pages"), ObjectSortDescriptor(key: "title", ascending: false)])
        let stored = directory.file("stored.json")
        try JSONEncoder().encode(model).write(to: stored)
        let again = try ModelFile.load(stored)
        XCTAssertEqual(again.fetchRequestTemplates, model.fetchRequestTemplates, "templates keep their settings when the model is stored")
        XCTAssertEqual(again.entity(named: "Author")?.fetchedProperties, model.entity(named: "Author")?.fetchedProperties)

        let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file("ordered.sqlite")))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            let author = try context.insertObject(entityName: "Author")
            try author.setValue("A", forKey: "name")
            for (title, pages, tag, entity) in [("b", 100, "x", "Book"), ("a", 100, "y", "Book"), ("c", 300, "x", "Comic"), ("d", 50, "x", "Book")] {
                let book = try context.insertObject(entityName: entity)
                try book.setValue(title, forKey: "title")
                try book.setValue(pages, forKey: "pages")
                try book.setValue(tag, forKey: "tag")
                try book.setObject(author, forKey: "author")
            }
            try context.save()
            let titles = { (objects: [ManagedObject]) throws -> [String] in
                try objects.map { object -> String in
                    guard case .string(let title) = try object.value(forKey: "title") else { return "?" }
                    return title
                }
            }
            XCTAssertEqual(try titles(context.fetchedProperty("byLength", of: author)), ["c", "a", "b", "d"])
            XCTAssertEqual(try titles(context.fetchedProperty("tagged", of: author)), ["b", "c", "d"])
            XCTAssertEqual(try titles(context.fetch(model.fetchRequestTemplate(named: "Shortest", substitutionVariables: ["MIN": 60]))), ["b", "a"])
            XCTAssertEqual(try titles(context.fetch(model.fetchRequestTemplate(named: "OnlyBooks"))), ["a", "b", "d"])
        }

        for (sort, reason) in [("pages:sideways", "asc or desc"), ("colour", "has no attribute 'colour'"), ("books.title", "not a to-one relationship")] {
            let bad = try String(contentsOf: file, encoding: .utf8).replacingOccurrences(of: "\"pages:desc\"", with: "\"\(sort)\"")
            try bad.write(to: file, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try ModelFile.load(file), sort) { error in
                XCTAssertTrue("\(error)".contains(reason), "\(sort): \(error)")
            }
            try bad.replacingOccurrences(of: "\"\(sort)\"", with: "\"pages:desc\"").write(to: file, atomically: true, encoding: .utf8)
        }
    }

    func testADerivedValueThatDoesNotFitItsAttributeStopsTheSave() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Tag",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "code", type: .integer16, isOptional: true, derivation: "lowercase:(name)"),
                ])
        ])
        let directory = try TemporaryDirectory()
        let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file("t.sqlite")))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            try context.insertObject(entityName: "Tag").setValue("Swift", forKey: "name")
            XCTAssertThrowsError(try context.save()) { error in
                guard case .typeMismatch(_, let property, _, let got) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertEqual(property, "code")
                XCTAssertTrue(got.contains("lowercase:(name)"), got)
            }
            XCTAssertTrue(context.hasChanges, "nothing was written")
        }
        XCTAssertEqual(try coordinator.history(after: 0), [])
    }

    func testToManyCountLimitsAreCheckedAtSave() throws {
        let stack = try openLibrary()
        let context = try stack.importerContext()
        try context.performAndWait { () throws in
            let author = try context.insertObject(entityName: "Author")
            try author.setValue("Reader", forKey: "name")
            for _ in 0..<4 {
                let book = try context.insertObject(entityName: "Book")
                try author.addObject(book, toKey: "favourites")
            }
            XCTAssertThrowsError(try context.save()) { error in
                guard case .validation(_, let property, let reason) = error as? AmbarError else { return XCTFail("\(error)") }
                XCTAssertEqual(property, "favourites")
                XCTAssertTrue(reason.contains("0…3"), reason)
            }
        }
    }

    func testRealDefectsAreRefusedNamingTheElementAndItsLine() throws {
        let directory = try TemporaryDirectory()
        func load(_ body: String) throws -> ManagedObjectModel {
            let file = directory.file("contents")
            try """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel">
            \(body)
            </model>
            """.write(to: file, atomically: true, encoding: .utf8)
            return try ModelFile.load(file)
        }
        func assertRefused(_ body: String, line: Int, mentions text: String, file: StaticString = #filePath, sourceLine: UInt = #line) {
            XCTAssertThrowsError(try load(body), file: file, line: sourceLine) { error in
                guard case .invalidModel(let message) = error as? AmbarError else { return XCTFail("\(error)", file: file, line: sourceLine) }
                XCTAssertTrue(message.contains(text), message, file: file, line: sourceLine)
                XCTAssertTrue(
                    message.contains("contents:\(line):"), "names the file and the line where the element opens: \(message)", file: file, line: sourceLine)
            }
        }
        assertRefused(
            """
            <entity name="A">
                <attribute name="n" attributeType="Integer 16" defaultValueString="many"/>
            </entity>
            """, line: 4, mentions: "cannot be read as Integer 16")
        assertRefused(
            """
            <entity name="A">
                <relationship name="b" toMany="YES" destinationEntity="B" inverseName="a"/>
            </entity>
            <entity name="B">
                <relationship name="a" maxCount="1" destinationEntity="A" inverseName="other"/>
            </entity>
            """, line: 4, mentions: "do not name each other")
        assertRefused(
            """
            <entity name="A">
                <attribute name="n" attributeType="String"/>
                <fetchIndex name="byMissing">
                    <fetchIndexElement property="missing" type="Binary" order="ascending"/>
                </fetchIndex>
            </entity>
            """, line: 5, mentions: "'missing', which is not a property")
        assertRefused(
            """
            <entity name="P"><attribute name="n" attributeType="String"/></entity>
            <entity name="C" parentEntity="P">
                <attribute name="n" attributeType="String"/>
            </entity>
            """, line: 5, mentions: "already declared by its ancestor 'P'")
        assertRefused(
            """
            <entity name="A">
                <attribute name="s" attributeType="String" derived="YES" derivationExpression="FUNCTION(name, 'x')"/>
            </entity>
            """, line: 4, mentions: "FUNCTION(name, 'x')")
        assertRefused(
            """
            <entity name="A">
                <attribute name="c" attributeType="Composite" composite="Address"/>
            </entity>
            """, line: 4, mentions: "\"Composite\"")
        assertRefused(
            """
            <entity name="A">
                <attribute name="n" attributeType="String"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="missing"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            """, line: 7, mentions: "names 'missing', which is neither an attribute nor a to-one relationship")
        assertRefused(
            """
            <fetchRequest name="all" entity="Missing"/>
            """, line: 3, mentions: "'Missing', which is not in the model")
    }
}
