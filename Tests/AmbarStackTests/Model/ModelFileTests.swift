import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Model files: Core Data's .xcdatamodeld/.xcdatamodel and the project's JSON.
final class ModelFileTests: XCTestCase {
    var fixtures: URL { Repository.fixtures }
    var repository: URL { Repository.root }

    func testACoreDataModelLoadsWithEveryTypeAndRelationshipKind() throws {
        let model = try ModelSource.named("Shop", directory: fixtures).load()
        XCTAssertEqual(Set(model.entityNames), ["Item", "Product", "Category", "Tag", "Review"], "the current version (Shop 2), not Shop")
        let product = try XCTUnwrap(model.entity(named: "Product"))
        let types = Dictionary(uniqueKeysWithValues: product.attributes.map { ($0.name, $0.type) })
        XCTAssertEqual(product.parent, "Item")
        XCTAssertEqual(model.entity(named: "Item")?.attributes.first { $0.name == "title" }?.type, .string)
        XCTAssertEqual(types["quantity"], .integer16)
        XCTAssertEqual(types["shelf"], .integer32)
        XCTAssertEqual(types["serial"], .integer64)
        XCTAssertEqual(types["weight"], .float)
        XCTAssertEqual(types["active"], .boolean)
        XCTAssertEqual(types["photo"], .binary)
        XCTAssertEqual(types["uuid"], .uuid)
        XCTAssertEqual(types["homepage"], .uri)
        XCTAssertEqual(types["cost"], .decimal)
        let attribute = { (name: String) in product.attributes.first { $0.name == name } }
        XCTAssertEqual(attribute("active")?.defaultValue, .bool(true))
        XCTAssertEqual(attribute("launched")?.defaultValue, .date(Date(timeIntervalSinceReferenceDate: 700_000_000)))
        XCTAssertEqual(attribute("cost")?.defaultValue, .decimal(Decimal(string: "1.25")!))
        XCTAssertEqual(model.entity(named: "Item")?.attributes.first { $0.name == "title" }?.defaultValue, .string("Untitled"))
        XCTAssertEqual(attribute("serial")?.isOptional, true)
        XCTAssertEqual(attribute("sku")?.isOptional, false)
        XCTAssertEqual(attribute("shelf")?.isIndexed, true, "from the fetch index")
        XCTAssertEqual(product.uniquenessConstraints, [["sku"]])
        let relationship = { (entity: String, name: String) in model.entity(named: entity)?.relationships.first { $0.name == name } }
        XCTAssertEqual(relationship("Product", "category")?.isToMany, false)
        XCTAssertEqual(relationship("Product", "tags")?.isToMany, true)
        XCTAssertEqual(relationship("Product", "reviews")?.deleteRule, .cascade)
        XCTAssertEqual(relationship("Category", "products")?.deleteRule, .deny)
        XCTAssertEqual(relationship("Tag", "products")?.deleteRule, .noAction)
        XCTAssertEqual(relationship("Review", "product")?.isOptional, false)
        XCTAssertEqual(model.entity(named: "Item")?.isAbstract, true)
    }

    func testObjectsRoundTripThroughACoreDataModel() throws {
        let directory = try TemporaryDirectory()
        let stack = try DataStack.open(model: .named("Shop", directory: fixtures), storeURL: directory.url, name: "shop")
        let context = try stack.importerContext()
        let photo = Data([0, 1, 2, 255])
        let uuid = UUID()
        try context.performAndWait { () throws in
            let category = try context.insertObject(entityName: "Category")
            try category.setValue("Lamps", forKey: "name")
            let product = try context.insertObject(entityName: "Product")
            try product.setValue("L-1", forKey: "sku")
            try product.setValue(photo, forKey: "photo")
            try product.setValue(uuid, forKey: "uuid")
            try product.setValue(URL(string: "https://example.com/l1")!, forKey: "homepage")
            try product.setObject(category, forKey: "category")
            let review = try context.insertObject(entityName: "Review")
            try review.setObject(product, forKey: "product")
            try context.save()
        }
        let reader = try stack.temporaryContext()
        try reader.performAndWait { () throws in
            let product = try XCTUnwrap(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Product")).first)
            XCTAssertEqual(try product.value(forKey: "title"), .string("Untitled"), "the Core Data default")
            XCTAssertEqual(try product.value(forKey: "quantity"), .integer(1))
            XCTAssertEqual(try product.value(forKey: "photo"), .data(photo))
            XCTAssertEqual(try product.value(forKey: "uuid"), .uuid(uuid))
            XCTAssertEqual(try product.object(forKey: "category")?.value(forKey: "name"), .string("Lamps"))
            XCTAssertEqual(try product.objects(forKey: "reviews").count, 1)
            XCTAssertEqual(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Item")), 1, "fetching the abstract parent finds the product")
        }
    }

    func testTheJSONFormatSpellsTheCoreDataFeaturesAndTheStoredFormRoundTrips() throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("library.json")
        try #"""
        {"entities": [
          {"name": "Author", "indexes": [["name", "born"]],
           "attributes": [{"name": "name", "type": "string"}, {"name": "born", "type": "date", "optional": true},
                          {"name": "draft", "type": "string", "optional": true, "transient": true},
                          {"name": "prefs", "type": "transformable", "optional": true, "valueTransformerName": "Prefs"},
                          {"name": "key", "type": "string", "optional": true, "derivation": "canonical:(name)"}],
           "relationships": [{"name": "books", "destination": "Book", "inverse": "author", "toMany": true, "ordered": true, "maxCount": 50}],
           "fetchedProperties": [{"name": "long", "entityName": "Book", "predicateFormat": "author == $FETCH_SOURCE AND pages > 300"}]},
          {"name": "Book", "attributes": [{"name": "pages", "type": "integer32", "default": 0}],
           "relationships": [{"name": "author", "destination": "Author", "inverse": "books"}]}],
         "fetchRequests": [{"name": "Thick", "entityName": "Book", "predicateFormat": "pages > $MIN"}]}
        """#.write(to: file, atomically: true, encoding: .utf8)
        let model = try ModelFile.load(file)
        let author = try XCTUnwrap(model.entity(named: "Author"))
        XCTAssertEqual(author.indexes, [["name", "born"]])
        XCTAssertEqual(author.attributes.first { $0.name == "draft" }?.isTransient, true)
        XCTAssertEqual(author.attributes.first { $0.name == "prefs" }?.valueTransformerName, "Prefs")
        XCTAssertEqual(author.relationships.first?.isOrdered, true)
        XCTAssertEqual(author.relationships.first?.maxCount, 50)
        XCTAssertEqual(author.fetchedProperties.first?.name, "long")
        XCTAssertEqual(model.fetchRequestTemplates["Thick"]?.fetchLimit, 0)

        // The form a store keeps (ManagedObjectModel's Codable) loads back as the same model.
        for source in [model, try ModelSource.named("Library", directory: fixtures).load()] {
            let stored = directory.file("stored.json")
            try JSONEncoder().encode(source).write(to: stored)
            let again = try ModelFile.load(stored)
            XCTAssertEqual(again, source)
            XCTAssertEqual(again.versionHash, source.versionHash)
        }
        // A model error in a JSON file names the file.
        try #"{"entities": [{"name": "A", "relationships": [{"name": "b", "destination": "Missing"}]}]}"#.write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ModelFile.load(file)) { error in
            XCTAssertTrue("\(error)".contains("library.json") && "\(error)".contains("'Missing'"), "\(error)")
        }
    }

    func testTheHandWrittenJSONFormat() throws {
        let model = try ModelFile.load(repository.appendingPathComponent("examples/products.model.json"))
        let product = try XCTUnwrap(model.entity(named: "Product"))
        XCTAssertEqual(product.attributes.first { $0.name == "active" }?.defaultValue, .bool(true))
        XCTAssertEqual(product.attributes.first { $0.name == "sku" }?.isIndexed, true)
        XCTAssertEqual(product.uniquenessConstraints, [["sku"]])

        let directory = try TemporaryDirectory()
        let file = directory.file("bad.json")
        try #"{"entities":[{"name":"A","attributes":[{"name":"x","type":"string","optinal":true}]}]}"#.write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ModelFile.load(file)) { error in
            XCTAssertTrue("\(error)".contains("unknown key \"optinal\""), "\(error)")
        }
        try #"{"entities":[{"name":"A","attributes":[{"name":"d","type":"date","default":"yesterday"}]}]}"#.write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ModelFile.load(file)) { error in XCTAssertTrue("\(error)".contains("is not a date"), "\(error)") }
    }

    func testTheFormTheStoreKeepsStillLoads() throws {
        let directory = try TemporaryDirectory()
        let model = try TestModel.make()
        let file = directory.file("Kept.json")
        try JSONEncoder().encode(model).write(to: file)
        XCTAssertEqual(try ModelFile.load(file).versionHash, model.versionHash)
    }

    func testAllModelsMergesJSONAndCoreDataFiles() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.copyItem(
            at: fixtures.appendingPathComponent("Shop.xcdatamodeld"), to: directory.url.appendingPathComponent("Shop.xcdatamodeld"))
        try FileManager.default.copyItem(
            at: repository.appendingPathComponent("examples/products.model.json"), to: directory.url.appendingPathComponent("Catalog.json"))
        XCTAssertThrowsError(try ModelSource.allModels(directory: directory.url).load(), "both define Product: a clear error, not a silent pick") { error in
            guard case .invalidModel = error as? AmbarError else { return XCTFail("\(error)") }
        }
        try FileManager.default.removeItem(at: directory.url.appendingPathComponent("Catalog.json"))
        try #"{"entities":[{"name":"Setting","attributes":[{"name":"key","type":"string"}]}]}"#.write(
            to: directory.file("Settings.json"), atomically: true, encoding: .utf8)
        XCTAssertEqual(
            Set(try ModelSource.allModels(directory: directory.url).load().entityNames), ["Item", "Product", "Category", "Tag", "Review", "Setting"])
    }
}
