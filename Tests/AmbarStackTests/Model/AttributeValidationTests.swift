import AmbarStack
import AmbarTestSupport
import Foundation
import XCTest

/// Attribute validation rules, as Core Data's model editor sets them (bounds of numbers and
/// dates, lengths of strings, a regular expression), read from Swift, JSON and Xcode models and
/// enforced at save: the save throws a validation error naming the object, the attribute and the
/// rule, and writes nothing.
final class AttributeValidationTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory = nil }

    private static let joinedFloor = Date(timeIntervalSinceReferenceDate: 0)

    private func swiftModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                "Member",
                properties: [
                    .attribute("age", .integer16, defaultValue: 30, validation: AttributeValidation(minimum: 16, maximum: 99)),
                    .attribute("code", .string, defaultValue: "ABC", validation: AttributeValidation(minimum: 3, maximum: 8, regularExpression: "[A-Z0-9]+")),
                    .attribute("score", .double, defaultValue: 0.5, validation: AttributeValidation(minimum: 0, maximum: 1)),
                    .attribute("joined", .date, optional: true, validation: AttributeValidation(minimum: Self.joinedFloor)),
                    .attribute("nickname", .string, optional: true, validation: AttributeValidation(minimum: 2)),
                ])
        ])
    }

    /// Saves one new Member with `values` set; the error of the save, or nil when it saved.
    private func saveMember(_ model: ManagedObjectModel, _ values: [String: any AttributeValueConvertible], in store: String) throws -> AmbarError? {
        let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file(store)))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait { () throws -> AmbarError? in
            let member = try context.insertObject(entityName: "Member")
            for (key, value) in values { try member.setValue(value.attributeValue, forKey: key) }
            do {
                try context.save()
                return nil
            } catch let error as AmbarError {
                return error
            }
        }
    }

    private func memberCount(_ model: ManagedObjectModel, in store: String) throws -> Int {
        let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file(store)))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Member")) }
    }

    private func assertRefused(
        _ error: AmbarError?, property: String, reasonContains text: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        guard case .validation(let object, let named, let reason)? = error else {
            return XCTFail("expected a validation error on \(property), got \(String(describing: error))", file: file, line: line)
        }
        XCTAssertEqual(object.entityName, "Member", file: file, line: line)
        XCTAssertEqual(named, property, file: file, line: line)
        XCTAssertTrue(reason.contains(text), "reason: \(reason)", file: file, line: line)
    }

    func testASaveBreakingARuleNamesTheAttributeAndTheRuleAndWritesNothing() throws {
        let model = try swiftModel()
        XCTAssertNil(try saveMember(model, ["age": 16, "code": "AB12", "score": 1.0, "joined": Self.joinedFloor], in: "ok.sqlite"), "bounds are inclusive")
        XCTAssertEqual(try memberCount(model, in: "ok.sqlite"), 1)

        let cases: [(values: [String: any AttributeValueConvertible], property: String, reason: String)] = [
            (["age": 15], "age", "below the model's minimum 16"),
            (["age": 100], "age", "above the model's maximum 99"),
            (["code": "AB"], "code", "2 characters long; the model requires at least 3"),
            (["code": "ABCDEFGHI"], "code", "at most 8"),
            (["code": "abc"], "code", "does not match the model's regular expression [A-Z0-9]+"),
            (["code": "AB-C"], "code", "does not match"),
            (["score": 1.5], "score", "above the model's maximum 1.0"),
            (["joined": Date(timeIntervalSinceReferenceDate: -1)], "joined", "below the model's minimum"),
            (["nickname": "x"], "nickname", "at least 2"),
        ]
        for (n, example) in cases.enumerated() {
            let store = "refused-\(n).sqlite"
            assertRefused(try saveMember(model, example.values, in: store), property: example.property, reasonContains: example.reason)
            XCTAssertEqual(try memberCount(model, in: store), 0, "nothing written for \(example.values)")
        }
        XCTAssertNil(try saveMember(model, ["nickname": "Al"], in: "nil.sqlite"), "a nil optional value is not checked; a set one is")
    }

    func testAChangeToASavedObjectIsCheckedToo() throws {
        let model = try swiftModel()
        let coordinator = try PersistentStoreCoordinator(model: model, store: .sqlite(directory.file("update.sqlite")))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            let member = try context.insertObject(entityName: "Member")
            try context.save()
            try member.setValue(.integer(120), forKey: "age")
            XCTAssertThrowsError(try context.save()) { error in
                guard case AmbarError.validation(_, "age", _) = error else { return XCTFail("\(error)") }
            }
            try context.rollback()
            XCTAssertEqual(try member.value(forKey: "age"), .integer(30))
        }
    }

    func testAnXcodeModelsRulesAreRead() throws {
        let bundle = directory.url.appendingPathComponent("Club.xcdatamodel")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic">
            <entity name="Member" representedClassName="Member" syncable="YES">
                <attribute name="age" attributeType="Integer 16" minValueString="16" maxValueString="99" defaultValueString="30" usesScalarValueType="YES"/>
                <attribute name="code" attributeType="String" minValueString="3" maxValueString="8" regularExpressionString="[A-Z0-9]+" defaultValueString="ABC"/>
                <attribute name="score" attributeType="Double" minValueString="0" maxValueString="1" defaultValueString="0.5" usesScalarValueType="YES"/>
                <attribute name="joined" optional="YES" attributeType="Date" minDateTimeInterval="0" maxDateTimeInterval="86400" usesScalarValueType="NO"/>
                <attribute name="nickname" optional="YES" attributeType="String" minValueString="" maxValueString=""/>
            </entity>
        </model>
        """#.write(to: bundle.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let model = try ModelFile.load(bundle)
        let attributes = try XCTUnwrap(model.entity(named: "Member")).attributes
        let rules = { (name: String) in attributes.first { $0.name == name }?.validation }
        XCTAssertEqual(rules("age")?.minimum, .integer(16))
        XCTAssertEqual(rules("age")?.maximum, .integer(99))
        XCTAssertEqual(rules("code")?.minimum, .integer(3), "a string's bounds are lengths")
        XCTAssertEqual(rules("code")?.regularExpression, "[A-Z0-9]+")
        XCTAssertEqual(rules("score")?.maximum, .double(1))
        XCTAssertEqual(rules("joined")?.maximum, .date(Date(timeIntervalSinceReferenceDate: 86_400)))
        XCTAssertEqual(rules("nickname")?.isEmpty, true, "empty texts are no rule, as in Xcode")

        assertRefused(try saveMember(model, ["code": "abc"], in: "xcode.sqlite"), property: "code", reasonContains: "regular expression")
        assertRefused(
            try saveMember(model, ["joined": Date(timeIntervalSinceReferenceDate: 90_000)], in: "xcode2.sqlite"), property: "joined",
            reasonContains: "above the model's maximum")
        XCTAssertNil(try saveMember(model, ["age": 99, "joined": Date(timeIntervalSinceReferenceDate: 10)], in: "xcode3.sqlite"))
    }

    func testAJSONModelsRulesAreReadAndKeptInTheStoredForm() throws {
        let file = directory.file("club.json")
        try #"""
        {"entities": [{"name": "Member", "attributes": [
          {"name": "age", "type": "integer16", "default": 30, "minimum": 16, "maximum": 99},
          {"name": "code", "type": "string", "default": "ABC", "minimum": 3, "maximum": 8, "regularExpression": "[A-Z0-9]+"},
          {"name": "score", "type": "double", "default": 0.5, "minimum": 0, "maximum": 1}]}]}
        """#.write(to: file, atomically: true, encoding: .utf8)
        let model = try ModelFile.load(file)
        let code = try XCTUnwrap(model.entity(named: "Member")?.attributes.first { $0.name == "code" })
        XCTAssertEqual(code.validation, AttributeValidation(minimum: 3, maximum: 8, regularExpression: "[A-Z0-9]+"))
        XCTAssertEqual(model.entity(named: "Member")?.attributes.first { $0.name == "score" }?.validation.minimum, .double(0), "coerced to the type")
        assertRefused(try saveMember(model, ["age": 12], in: "json.sqlite"), property: "age", reasonContains: "below the model's minimum 16")

        // The store keeps the model it was made with; reopened without a model, the rules hold.
        let stored = try JSONEncoder().encode(model.entities)
        let decoded = try JSONDecoder().decode([EntityDescription].self, from: stored)
        XCTAssertEqual(decoded, model.entities)
    }

    func testRulesDoNotChangeTheVersionHash() throws {
        let plain = try ManagedObjectModel(entities: [EntityDescription("Member", properties: [.attribute("age", .integer16, defaultValue: 30)])])
        let ruled = try ManagedObjectModel(entities: [
            EntityDescription("Member", properties: [.attribute("age", .integer16, defaultValue: 30, validation: AttributeValidation(minimum: 1))])
        ])
        XCTAssertEqual(plain.versionHash, ruled.versionHash, "as in Core Data, validation rules need no migration")
    }

    func testRulesThatCannotHoldAreRefusedWithTheModel() throws {
        let bad: [(AttributeType, AttributeValidation, String)] = [
            (.string, AttributeValidation(regularExpression: "[unclosed"), "is not valid ICU syntax"),
            (.integer32, AttributeValidation(minimum: 10, maximum: 5), "above its maximum"),
            (.string, AttributeValidation(minimum: 9, maximum: 2), "minimum length 9 is above its maximum 2"),
            (.string, AttributeValidation(minimum: -1), "zero or more"),
            (.boolean, AttributeValidation(minimum: 0), "cannot have a minimum"),
            (.integer32, AttributeValidation(regularExpression: "[0-9]+"), "strings only"),
            (.integer16, AttributeValidation(maximum: "ten"), "is not an integer16"),
        ]
        for (type, rules, text) in bad {
            XCTAssertThrowsError(
                try ManagedObjectModel(entities: [EntityDescription("Member", properties: [.attribute("x", type, optional: true, validation: rules)])])
            ) {
                error in
                guard case AmbarError.invalidModel(let message) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("Member.x") && message.contains(text), message)
            }
        }
    }
}
