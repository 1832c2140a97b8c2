import AmbarStack
import Foundation
import RecordImport

/// What the import-line fuzzer checks for one input; shared by the libFuzzer target and the
/// replay test.
public enum ImportLineChecks {
    /// A decoder for an entity with one attribute of every type, upserting by `keyAttribute`.
    public static func makeDecoder(keyAttribute: String? = "uid") throws -> ImportRecordDecoder {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                "Record",
                properties: [
                    .attribute("uid", .string),
                    .attribute("small", .integer16, optional: true),
                    .attribute("medium", .integer32, optional: true),
                    .attribute("large", .integer64, optional: true),
                    .attribute("ratio", .double, optional: true),
                    .attribute("flag", .boolean, optional: true),
                    .attribute("when", .date, optional: true),
                    .attribute("blob", .binary, optional: true),
                    .attribute("id", .uuid, optional: true),
                    .attribute("link", .uri, optional: true),
                    .attribute("amount", .decimal, optional: true),
                    .attribute("note", .string, defaultValue: "none"),
                    .toOne("parent", "Record", inverse: "children"),
                    .toMany("children", "Record", inverse: "parent"),
                ])
        ])
        return try ImportRecordDecoder(model: model, entityName: "Record", keyAttribute: keyAttribute)
    }

    /// Decodes `bytes` as one line and checks the outcome: a record or an ``ImportLineError`` for
    /// line 7, never a trap; a record has its key, and only attributes of the entity, each of
    /// the attribute's type.
    ///
    /// Returns a description of the first broken property, or nil when all hold.
    public static func check(_ bytes: [UInt8], decoder: ImportRecordDecoder) -> String? {
        let record: ImportRecord
        do {
            record = try decoder.decode(Data(bytes), line: 7)
        } catch {
            return error.line == 7 ? nil : "an error names line \(error.line), not 7"
        }
        guard let key = record.key, case .string = key else { return "a record without a string key" }
        for (name, value) in record.values {
            guard let attribute = decoder.attributes[name] else { return "a value for \(name), which is no attribute" }
            if value.isNull { continue }
            guard fits(value, attribute.type) else { return "\(name) holds \(value), not a \(attribute.type)" }
        }
        // Relationship fields name related objects by URI here (no --relate): strings only, a
        // single one for a to-one, an array for a to-many.
        for (name, reference) in record.references {
            guard let target = decoder.relationships[name] else { return "a reference for \(name), which is no relationship" }
            switch reference {
            case .one(let value):
                if target.isToMany { return "\(name) is to-many but holds one reference" }
                if let value, case .string = value {} else if value != nil { return "\(name) holds \(String(describing: value)), not a URI" }
            case .many(let values):
                if !target.isToMany { return "\(name) is to-one but holds several references" }
                for value in values {
                    guard case .string = value else { return "\(name) holds \(value), not a URI" }
                }
            }
        }
        _ = try? decoder.checkComplete(record)
        return nil
    }

    /// Whether `value` is of `type` (and, for the small integer types, in range).
    static func fits(_ value: AttributeValue, _ type: AttributeType) -> Bool {
        switch (type, value) {
        case (.integer16, .integer(let n)): Int16(exactly: n) != nil
        case (.integer32, .integer(let n)): Int32(exactly: n) != nil
        case (.string, .string), (.integer64, .integer), (.double, .double), (.float, .double), (.boolean, .bool),
            (.date, .date), (.binary, .data), (.uuid, .uuid), (.uri, .url), (.decimal, .decimal):
            true
        default:
            false
        }
    }
}
